// Pruning for retention on an SD card: delivered results, their outbox rows and raw captures go after `resultsDays`, audit
// entries after `auditDays`, then the freed pages are returned to the filesystem (auto_vacuum=INCREMENTAL, set by
// database.ts before the first table exists).
// Rules kept by every run:
// - Never pruned automatically: dead letters, conflicts (and the results and captures they name). Rejected captures
//   only beyond their size bound, oldest first (prune-rejected.ts).
// - A result goes only when it was first and last seen before the cut-off and no outbox row of its key is pending,
//   dead or conflict (all of them sent, or none: QC results and sink-less gateways have nothing to deliver).
// - An outbox row goes only with all the rows of its result: all sent, older than the cut-off, named by no conflict.
// - A capture goes only when it is accepted, older than the cut-off, and no remaining result or conflict names it.
// - An order sent to an analyzer goes once the LIMS has had its dispatch for as long (prune-dispatches.ts).
// - Each batch is one short IMMEDIATE transaction; the event loop runs between batches, so an analyzer's commit
//   waits at most one batch, and a stop lands between two.
// The kept keys (results with an old row not yet sent) are gathered by the outbox walk, batch by batch: the walk reads
// only rows from before the cut-off, never a fresh backlog. A row can only leave pending/dead/conflict for sent
// during a run (an operator's retry turns dead into pending), so a key kept once stays rightly kept; a row queued
// later for an old result (a forwarded conflict) is caught by the result's own outbox slots (layout.ts).
import type Database from 'better-sqlite3';
import { AuditLog, outboxRangeOf } from './layout.js';
import { dispatchesStep } from './prune-dispatches.js';
import { rejectedStep } from './prune-rejected.js';

/** Rows older than these instants (epoch ms) may go; `now` stamps the run's audit entry. */
export interface Cutoffs {
  results: number;
  audit: number;
  now: number;
  /** Raw bytes of the newest rejected captures kept; older ones go. Absent: rejected captures are all kept. */
  rejectedBytes?: number;
}

/** What one prune run removed. */
export interface PruneCounts {
  results: number;
  outbox: number;
  captures: number;
  /** Rejected captures beyond the size bound. */
  rejected: number;
  /** Orders sent to analyzers whose dispatch the LIMS has had for `resultsDays` (prune-dispatches.ts). */
  dispatches: number;
  audit: number;
  /** Pages handed back to the filesystem by incremental vacuum. */
  freedPages: number;
  /** True when results were left alone this run because too many old rows are still undelivered. */
  resultsDeferred: boolean;
}

/** How pruneOnce paces itself; the defaults yield to the event loop between batches. */
export interface PruneControl {
  /** Checked between batches: a stop lands there. */
  signal?: AbortSignal;
  /** Awaited between batches. */
  pause?: () => Promise<void>;
}

// Beyond this many old undelivered keys a run prunes no results (memory stays bounded on a Pi): a backlog older
// than the retention period is an outage a person must look at, not something retention should work around.
const MAX_KEPT_KEYS = 100_000;
const VACUUM_STEP_PAGES = 256;
// Without an index on results.capture_id, a capture's results are looked for among those first seen between its
// receipt and its last processing (a result's first_seen_at is the `now` of the transaction that inserted it).
const CLOCK_SLACK_MS = 5_000;

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Prunes everything older than the cut-offs in batches of `batchSize`, audits the run, then vacuums. */
export async function pruneOnce(db: Database.Database, cutoffs: Cutoffs, batchSize = 500, control: PruneControl = {}): Promise<PruneCounts> {
  const pause = control.pause ?? nextTick;
  const stopped = (): boolean => control.signal?.aborted === true;
  const counts: PruneCounts = { results: 0, outbox: 0, captures: 0, rejected: 0, dispatches: 0, audit: 0, freedPages: 0, resultsDeferred: false };
  const walk = outboxWalk(db, cutoffs.results);
  const kept = capturesKept(db);
  const phases: [keyof PruneCounts, BatchStep][] = [
    ['outbox', walk.step],
    ['results', resultsStep(db, cutoffs.results, walk.kept, walk.overflowed)],
    ['captures', capturesStep(db, cutoffs.results, kept)],
    ...(cutoffs.rejectedBytes === undefined ? [] : [['rejected', rejectedStep(db, cutoffs.rejectedBytes, kept)] as [keyof PruneCounts, BatchStep]]),
    ['dispatches', dispatchesStep(db, cutoffs.results)],
    ['audit', auditStep(db, cutoffs.audit)],
  ];
  run: for (const [name, step] of phases) {
    const tx = db.transaction(() => step(batchSize));
    for (;;) {
      if (stopped()) break run;
      const { removed, done, outbox } = tx.immediate();
      (counts[name] as number) += removed;
      counts.outbox += outbox ?? 0;
      if (done) break;
      await pause();
    }
  }
  counts.resultsDeferred = walk.overflowed();
  // Also a run cut short by stop() is audited with what it did.
  new AuditLog(db).write(
    cutoffs.now,
    'gateway',
    'retention-pruned',
    null,
    JSON.stringify({ ...counts, freedPages: undefined, resultsBefore: cutoffs.results, auditBefore: cutoffs.audit, rejectedBytesKept: cutoffs.rejectedBytes }),
  );
  counts.freedPages = await vacuum(db, pause, stopped);
  return counts;
}

// `removed` counts the phase's own table; `outbox` the outbox rows a result took with it.
type BatchStep = (limit: number) => { removed: number; done: boolean; outbox?: number };

type WalkRow = [id: number, key: string, state: string, createdAt: number];

// Outbox rows in id (arrival) order, a result's rows side by side (its slots), up to the first row from after the
// cut-off. A result whose rows are all sent goes; any other row makes its key kept. A batch never ends inside a
// result's rows, so a result is judged on all of them.
function outboxWalk(db: Database.Database, cutoff: number): { step: BatchStep; kept: Set<string>; overflowed: () => boolean } {
  const page = db.prepare(`SELECT id, dedup_key, state, created_at FROM outbox WHERE id > ? ORDER BY id LIMIT ?`).raw();
  const remove = db.prepare('DELETE FROM outbox WHERE id = ?');
  const named = new Set(db.prepare('SELECT dedup_key FROM conflicts').pluck().all() as string[]);
  const kept = new Set<string>(named);
  let overflowed = false;
  let after = 0;
  const step: BatchStep = (limit) => {
    const rows = page.all(after, limit) as WalkRow[];
    const fresh = rows.findIndex((row) => row[3] >= cutoff);
    const done = fresh >= 0 || rows.length < limit;
    const usable = wholeResults(fresh >= 0 ? rows.slice(0, fresh) : rows, done);
    let removed = 0;
    for (let i = 0; i < usable.length;) {
      let j = i;
      while (j < usable.length && usable[j]![1] === usable[i]![1]) j++;
      const group = usable.slice(i, j);
      const key = group[0]![1];
      if (group.some((row) => row[2] !== 'sent')) {
        if (kept.size < MAX_KEPT_KEYS) kept.add(key);
        else overflowed = true;
      } else if (!kept.has(key)) for (const row of group) removed += remove.run(row[0]).changes;
      i = j;
    }
    if (usable.length > 0) after = usable[usable.length - 1]![0];
    return { removed, done };
  };
  return { step, kept, overflowed: () => overflowed };
}

// Holds back the rows of the last result in the batch (they may go on in the next one) unless the walk ends here.
function wholeResults(rows: WalkRow[], last: boolean): WalkRow[] {
  if (last || rows.length === 0) return rows;
  const key = rows[rows.length - 1]![1];
  let end = rows.length;
  while (end > 0 && rows[end - 1]![1] === key) end--;
  return end > 0 ? rows.slice(0, end) : rows;
}

// Besides the kept keys, each candidate's own outbox slots (layout.ts) are looked at: a row queued
// after the run began (a conflict forwarded as a correction) keeps its result, and sent slots go with it.
function resultsStep(db: Database.Database, cutoff: number, kept: Set<string>, deferred: () => boolean): BatchStep {
  const unsent = db.prepare(`SELECT 1 FROM outbox WHERE id BETWEEN ? AND ? AND dedup_key = ? AND state <> 'sent' LIMIT 1`).pluck();
  const removeSlots = db.prepare(`DELETE FROM outbox WHERE id BETWEEN ? AND ? AND dedup_key = ? AND state = 'sent'`);
  const page = db
    .prepare(
      `SELECT id, dedup_key, first_seen_at, last_seen_at FROM results INDEXED BY results_first_seen
      WHERE first_seen_at < @cutoff AND first_seen_at >= @at AND NOT (first_seen_at = @at AND id <= @id)
      ORDER BY first_seen_at, id LIMIT @limit`,
    )
    .raw();
  const remove = db.prepare('DELETE FROM results WHERE id = ?');
  const cursor = { at: 0, id: 0 };
  return (limit) => {
    if (deferred()) return { removed: 0, done: true };
    const rows = page.all({ cutoff, limit, ...cursor }) as [number, string, number, number][];
    let removed = 0;
    let outbox = 0;
    for (const [id, key, firstSeenAt, lastSeenAt] of rows) {
      Object.assign(cursor, { at: firstSeenAt, id });
      // A result an analyzer re-sent lately stays: pruning it would make the next replay a new, re-delivered result.
      if (lastSeenAt >= cutoff || kept.has(key)) continue;
      const slots = [...outboxRangeOf(id), key] as const;
      if (unsent.get(...slots) !== undefined) continue;
      outbox += removeSlots.run(...slots).changes;
      remove.run(id);
      removed++;
    }
    return { removed, outbox, done: rows.length < limit };
  };
}

// Captures in id (journal) order up to the first one received after the cut-off: ids follow receipt (the journal is
// written as messages complete), and a capture out of that order by a few seconds only waits for the next run.
function capturesStep(db: Database.Database, cutoff: number, kept: CaptureKept): BatchStep {
  const page = db.prepare(`SELECT id, status, received_at, processed_at FROM captures WHERE id > ? ORDER BY id LIMIT ?`).raw();
  const remove = db.prepare(`DELETE FROM captures WHERE id = ? AND status = 'accepted'`);
  let after = 0;
  return (limit) => {
    const rows = page.all(after, limit) as [number, string, number, number][];
    const fresh = rows.findIndex((row) => row[2] >= cutoff);
    let removed = 0;
    for (const [id, status, receivedAt, processedAt] of fresh >= 0 ? rows.slice(0, fresh) : rows) {
      after = id;
      if (status !== 'accepted' || processedAt >= cutoff || kept(id, receivedAt, processedAt)) continue;
      removed += remove.run(id).changes;
    }
    return { removed, done: fresh >= 0 || rows.length < limit };
  };
}

type CaptureKept = (id: number, receivedAt: number, processedAt: number) => boolean;

/** Whether a capture must stay: a conflict names it or a stored result came from it. */
export function capturesKept(db: Database.Database): CaptureKept {
  const named = new Set(db.prepare('SELECT capture_id FROM conflicts WHERE capture_id IS NOT NULL').pluck().all() as number[]);
  const hasResults = resultsOfCapture(db);
  return (id, receivedAt, processedAt) => named.has(id) || hasResults(id, receivedAt, processedAt);
}

// Exact with an index on results(capture_id); otherwise bounded by the capture's receipt and last processing.
function resultsOfCapture(db: Database.Database): (id: number, receivedAt: number, processedAt: number) => boolean {
  const indexes = db.prepare(`SELECT name FROM pragma_index_list('results')`).pluck().all() as string[];
  const indexed = indexes.some((name) => {
    const first = db.prepare(`SELECT name FROM pragma_index_info(?) WHERE seqno = 0`).pluck().get(name);
    return first === 'capture_id';
  });
  if (indexed) {
    const any = db.prepare('SELECT 1 FROM results WHERE capture_id = ? LIMIT 1').pluck();
    return (id) => any.get(id) !== undefined;
  }
  const any = db.prepare(`SELECT 1 FROM results INDEXED BY results_first_seen WHERE first_seen_at BETWEEN ? AND ? AND capture_id = ? LIMIT 1`).pluck();
  return (id, receivedAt, processedAt) =>
    any.get(Math.min(receivedAt, processedAt) - CLOCK_SLACK_MS, Math.max(receivedAt, processedAt) + CLOCK_SLACK_MS, id) !== undefined;
}

// The audit log is append-only and every entry is stamped with the one injected clock when written, so its oldest
// entries are its lowest ids: a batch takes them up to the first one from after the cut-off. No index on `at` (it would
// cost ingest an index entry per result); a clock stepped back can only delay pruning, never prune early.
function auditStep(db: Database.Database, cutoff: number): BatchStep {
  const oldest = db.prepare('SELECT id, at FROM audit ORDER BY id LIMIT ?').raw();
  const remove = db.prepare('DELETE FROM audit WHERE id <= ?');
  return (limit) => {
    const rows = oldest.all(limit) as [number, number][];
    const fresh = rows.findIndex((row) => row[1] >= cutoff);
    const old = fresh >= 0 ? fresh : rows.length;
    const removed = old > 0 ? remove.run(rows[old - 1]![0]).changes : 0;
    return { removed, done: fresh >= 0 || rows.length < limit };
  };
}

// Small steps: each incremental_vacuum is a write transaction that moves pages, so it holds the lock as briefly as a batch.
async function vacuum(db: Database.Database, pause: () => Promise<void>, stopped: () => boolean): Promise<number> {
  const free = (): number => db.pragma('freelist_count', { simple: true }) as number;
  const before = free();
  let left = before;
  while (left > 0 && !stopped()) {
    db.pragma(`incremental_vacuum(${VACUUM_STEP_PAGES})`);
    const now = free();
    if (now >= left) break;
    left = now;
    if (left > 0) await pause();
  }
  return before - left;
}
