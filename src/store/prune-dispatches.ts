// Retention of the orders analyzers were sent (dispatches.ts): a dispatch the LIMS has been told about goes after
// `resultsDays`, like the results. One still pending (the LIMS not told yet) or dead (refused, for a person) stays.
// Rows are appended as analyzers ACK, so the oldest are the lowest ids: a batch walks them up to the first one from
// after the cut-off, and needs no index on the time.
import type Database from 'better-sqlite3';

/** One batch of deletions; `removed` counts dispatches. */
export type DispatchStep = (limit: number) => { removed: number; done: boolean };

/** Deletes, batch by batch, the dispatches sent to the LIMS before `cutoff` (epoch ms). */
export function dispatchesStep(db: Database.Database, cutoff: number): DispatchStep {
  const page = db.prepare('SELECT id, dispatched_at, state FROM dispatches WHERE id > ? ORDER BY id LIMIT ?').raw();
  const remove = db.prepare(`DELETE FROM dispatches WHERE id = ? AND state = 'sent'`);
  let after = 0;
  return (limit) => {
    const rows = page.all(after, limit) as [number, number, string][];
    let removed = 0;
    for (const [id, at, state] of rows) {
      if (at >= cutoff) return { removed, done: true };
      after = id;
      if (state === 'sent') removed += remove.run(id).changes;
    }
    return { removed, done: rows.length < limit };
  };
}
