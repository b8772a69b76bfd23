// The size bound on rejected captures. They wait for a person (fix the mapping, then reprocess), so age alone never
// removes them; but a sender of garbage, or a misconfigured analyzer rejected for days, must not fill the SD card up
// to the disk floor, where the gateway refuses every instrument. So the newest rejected captures are kept up to
// `maxBytes` of raw bytes and older ones go, except a capture a conflict names or a stored result came from (a message
// rejected only in part): those follow the accepted captures' rule in prune.ts.
import type Database from 'better-sqlite3';

/** One batch of deletions; `removed` counts captures. */
export type RejectedStep = (limit: number) => { removed: number; done: boolean };

/**
 * Deletes, batch by batch, the rejected captures older than the newest `maxBytes` of them. The boundary is found once,
 * by one ordered pass over the rejected-capture index; captures rejected after it are newer and never touched.
 */
export function rejectedStep(db: Database.Database, maxBytes: number, keeps: (id: number, receivedAt: number, processedAt: number) => boolean): RejectedStep {
  const boundary = db
    .prepare(
      `SELECT id FROM (SELECT id, SUM(length(raw)) OVER (ORDER BY id DESC) AS newer_bytes
    FROM captures WHERE status = 'rejected') WHERE newer_bytes > ? ORDER BY id DESC LIMIT 1`,
    )
    .pluck();
  const page = db
    .prepare(
      `SELECT id, received_at, processed_at FROM captures INDEXED BY captures_rejected
    WHERE status = 'rejected' AND id > ? AND id <= ? ORDER BY id LIMIT ?`,
    )
    .raw();
  const remove = db.prepare(`DELETE FROM captures WHERE id = ? AND status = 'rejected'`);
  let last: number | undefined;
  let after = 0;
  return (limit) => {
    last ??= (boundary.get(maxBytes) as number | undefined) ?? 0;
    const rows = page.all(after, last, limit) as [number, number, number][];
    let removed = 0;
    for (const [id, receivedAt, processedAt] of rows) {
      after = id;
      if (!keeps(id, receivedAt, processedAt)) removed += remove.run(id).changes;
    }
    return { removed, done: rows.length < limit };
  };
}
