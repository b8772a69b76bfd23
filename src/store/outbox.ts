// The outbox side of the store: claiming due rows per sink and recording each row's outcome.
// Durability rules: a claim writes nothing (rows in flight are excluded in memory, so after a crash every
// unfinished row is simply due again); every batch's outcomes are recorded in ONE synchronous transaction, committed
// without waiting for fsync (a lost mark only means a re-delivery the sink absorbs); synchronous is restored after.
// An outcome applies only to the payload that was claimed: a correction queued while the old version was in flight
// (resolveConflict) changes the result's payload_sha256, so the old version's outcome leaves the correction pending.
// The payload is the result's, stored once for every sink: a row's result is one rowid lookup (layout.ts, the outbox
// ids), so a claim reads it by rowid and an outcome rewrites only the small outbox row.
import type Database from 'better-sqlite3';
import type { OutboxRow, Outcome } from '../delivery/contract.js';
import { AuditLog, claimedPayloadIs, resultIdSql } from './layout.js';
import { OutboxOperator } from './outbox-operator.js';

// No alias for outbox: the plans read `SEARCH outbox USING INDEX outbox_due` (test/delivery/outbox.test.ts).
// The ids BETWEEN the two parameters after the in-flight ones are a group commit's whose fsync has not returned yet.
const DUE = `WHERE outbox.sink = ? AND outbox.state = 'pending' AND outbox.next_attempt_at <= ?
  AND outbox.id NOT IN (SELECT value FROM json_each(?)) AND outbox.id NOT BETWEEN ? AND ?
  ORDER BY outbox.next_attempt_at, outbox.id LIMIT ?`;
// CROSS JOIN keeps the outbox outer (SQLite never reorders it): the due rows come off outbox_due, each result by rowid.
const ROW_COLUMNS = `outbox.id, outbox.sink, outbox.dedup_key, r.record_id, outbox.attempts, outbox.etag, r.payload, r.payload_sha256`;
type RawRow = [number, string, string, string, number, string | null, string, string];

/** The claim query (exported so a test can EXPLAIN it): parameters sink, now (steady time), JSON array of in-flight ids, the unsynced range, limit. */
export const CLAIM_SQL = `SELECT ${ROW_COLUMNS} FROM outbox CROSS JOIN results r ON r.id = ${resultIdSql('outbox.id')} ${DUE}`;

/** Outbox operations on the store's one SQLite connection. */
export class Outbox extends OutboxOperator {
  private readonly inFlight = new Map<string, Set<number>>();
  // Nothing is sent before it is durable: a group commit's rows stay out of every claim until its fsync has returned,
  // or a power cut could take back from the gateway a result a sink already holds.
  private unsynced: readonly [number, number] = [0, -1];
  private readonly due: Database.Statement;
  private readonly dueAt: Database.Statement;
  private readonly record: (batches: readonly OutcomeBatch[]) => number;

  /** `afterRecord` runs after a batch with deliveries is recorded (the store asks for a checkpoint off the loop). */
  constructor(
    db: Database.Database,
    now: () => number,
    private readonly afterRecord: () => void = () => {},
    due: () => number = now,
  ) {
    super(db, now, due);
    // Served by the partial index outbox_due: cost follows `limit` and the rows in flight, never the backlog.
    // Raw arrays: better-sqlite3 builds them faster than keyed objects, and the claim is on the hot path.
    this.due = db.prepare(CLAIM_SQL).raw();
    this.dueAt = db.prepare(`SELECT next_attempt_at FROM outbox ${DUE}`).pluck();
    const stmts = prepareOutcomes(db);
    this.record = db.transaction((batches: readonly OutcomeBatch[]) => {
      const at = this.now();
      let marked = 0;
      for (const batch of batches) marked += recordBatch(stmts, batch, at);
      return marked;
    });
  }

  /** Up to `limit` pending rows of `sink` due now and not already in flight, oldest due first; they stay in flight until recorded or released. */
  claimDue(sink: string, limit: number): OutboxRow[] {
    const flying = this.flying(sink);
    const raw = this.due.all(sink, this.dueNow(), JSON.stringify([...flying]), ...this.unsynced, limit) as RawRow[];
    return raw.map(([id, rowSink, dedupKey, recordId, attempts, etag, payload, payloadSha256]) => {
      flying.add(id);
      return { id, sink: rowSink, dedupKey, recordId, attempts, etag, payload, payloadSha256 };
    });
  }

  /** Records one outcome per row in ONE transaction; `retryAt[i]` (steady time) null keeps the row's due time (sink-wide pauses). */
  recordOutcomes(sink: string, rows: readonly OutboxRow[], outcomes: readonly Outcome[], retryAt: readonly (number | null)[]): void {
    this.recordBatches([{ sink, rows, outcomes, retryAt }]);
  }

  /** Records the outcomes of several batches (of any sinks) in ONE transaction, as recordOutcomes does one batch's. */
  recordBatches(batches: readonly OutcomeBatch[]): void {
    for (const { rows, outcomes } of batches) {
      if (outcomes.length !== rows.length) throw new Error(`recordOutcomes: ${rows.length} rows but ${outcomes.length} outcomes`);
    }
    // An outcome mark need not wait for fsync: losing it to a power cut only re-delivers the rows, which every sink
    // absorbs (invariant 5), and WAL order means the next FULL commit (an ingest) makes it durable too. Waiting on
    // fsync here would stall the event loop, and with it every other batch in flight, once per batch.
    const level = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      // Only deliveries write enough to need checkpoints soon; a sink that is down must not keep a thread running.
      if (this.record(batches) > 0) this.afterRecord();
    } finally {
      this.db.pragma(`synchronous = ${level}`);
      for (const { sink, rows } of batches) this.release(sink, rows);
    }
  }

  /** Returns claimed rows to the due set without recording anything (a batch abandoned before its outcome). */
  release(sink: string, rows: readonly OutboxRow[]): void {
    const flying = this.flying(sink);
    for (const row of rows) flying.delete(row.id);
  }

  /** Rows of `sink` currently claimed and not yet recorded. */
  inFlightCount(sink: string): number {
    return this.flying(sink).size;
  }

  /** Earliest next_attempt_at (steady time) of a pending row of `sink` that is not in flight, or null when none is. */
  nextDueAt(sink: string): number | null {
    const at = this.dueAt.get(sink, Number.MAX_SAFE_INTEGER, JSON.stringify([...this.flying(sink)]), ...this.unsynced, 1) as number | undefined;
    return at ?? null;
  }

  /** Keeps the rows with ids `from`..`to` out of claims (a group committed, not yet fsynced); null lets them in. */
  holdUnsynced(range: readonly [number, number] | null): void {
    this.unsynced = range ?? [0, -1];
  }

  /** Forgets every in-flight claim (after the drains have stopped); the rows are due again as they were. */
  resetInFlight(): void {
    this.inFlight.clear();
  }

  private flying(sink: string): Set<number> {
    let set = this.inFlight.get(sink);
    if (!set) {
      set = new Set();
      this.inFlight.set(sink, set);
    }
    return set;
  }
}

/** One batch's outcomes: one per row, `retryAt[i]` (steady time) null keeping the row's due time. */
export interface OutcomeBatch {
  sink: string;
  rows: readonly OutboxRow[];
  outcomes: readonly Outcome[];
  retryAt: readonly (number | null)[];
}

// Marks one batch inside the caller's transaction; returns how many rows it marked sent.
function recordBatch(stmts: OutcomeStatements, { sink, rows, outcomes, retryAt }: OutcomeBatch, at: number): number {
  const sent: [number, string][] = [];
  let marked = 0;
  rows.forEach((row, i) => {
    const outcome = outcomes[i]!;
    if (outcome.kind === 'delivered' && outcome.etag === undefined) sent.push([row.id, row.payloadSha256]);
    else marked += applyOutcome(stmts, sink, row, outcome, retryAt[i] ?? null, at);
  });
  // One statement for the common case: a whole batch delivered.
  if (sent.length > 0) marked += stmts.sentMany.run(at, at, JSON.stringify(sent)).changes;
  if (marked > 0) {
    const minute = Math.floor(at / 60_000);
    // The sink's counter row exists before any minute can fold into it or a trigger take from it; once it does, this
    // writes nothing, and the batch's count goes to its minute alone (migration 11): one page, not two.
    stmts.countSent.run(sink);
    stmts.countMinute.run(sink, minute, marked);
    // A day and an hour: the page's last-hour rate, and whole hours for its 24-hour chart.
    stmts.forgetMinutes.run(sink, minute - 25 * 60);
  }
  return marked;
}

interface OutcomeStatements {
  sent: Database.Statement;
  sentMany: Database.Statement;
  retry: Database.Statement;
  dead: Database.Statement;
  conflict: Database.Statement;
  conflictRow: Database.Statement;
  audit: AuditLog;
  countSent: Database.Statement;
  countMinute: Database.Statement;
  forgetMinutes: Database.Statement;
}

function prepareOutcomes(db: Database.Database): OutcomeStatements {
  return {
    sent: db.prepare(`UPDATE outbox SET state = 'sent', etag = coalesce(?, etag), sent_at = ?, updated_at = ?, last_error = NULL
      WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    // The batch as [[id, payload_sha256], ...]; each row is found by its id.
    sentMany: db.prepare(`UPDATE outbox SET state = 'sent', sent_at = ?, updated_at = ?, last_error = NULL
      FROM (SELECT value ->> 0 AS id, value ->> 1 AS sha FROM json_each(?)) AS b
      WHERE outbox.id = b.id AND outbox.state = 'pending' AND ${claimedPayloadIs('b.sha')}`),
    // A sink-wide failure (retryAt null) keeps the row's attempts and due time: an outage never ages a result.
    retry: db.prepare(`UPDATE outbox SET attempts = attempts + ?, next_attempt_at = coalesce(?, next_attempt_at), last_error = ?,
      updated_at = ? WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    dead: db.prepare(`UPDATE outbox SET state = 'dead', attempts = attempts + 1, last_error = ?, updated_at = ?
      WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    // The sink's current version tag, when its outcome names one, replaces ours: a correction forwarded by a person
    // (conflict-resolution.ts) then names the version it replaces (LIMS If-Match) instead of failing on a stale one.
    conflict: db.prepare(`UPDATE outbox SET state = 'conflict', etag = coalesce(?, etag), last_error = ?, updated_at = ?
      WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    conflictRow: db.prepare(`INSERT INTO conflicts (dedup_key, origin, stored_payload, incoming_payload, incoming_digest, reason, detected_at)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedup_key, origin, incoming_digest) DO UPDATE SET occurrences = occurrences + 1`),
    audit: new AuditLog(db),
    // Once per batch instead of a trigger per row (migration 2); the count itself is in the minutes (migration 11).
    countSent: db.prepare(`INSERT INTO outbox_sent (sink, n) VALUES (?, 0) ON CONFLICT (sink) DO NOTHING`),
    countMinute: db.prepare(`INSERT INTO outbox_sent_minutes (sink, minute, n) VALUES (?, ?, ?)
      ON CONFLICT (sink, minute) DO UPDATE SET n = n + excluded.n`),
    forgetMinutes: db.prepare('DELETE FROM outbox_sent_minutes WHERE sink = ? AND minute < ?'),
  };
}

/** Applies one outcome; returns how many rows it marked sent (0 or 1). */
function applyOutcome(s: OutcomeStatements, sink: string, row: OutboxRow, outcome: Outcome, retryAt: number | null, at: number): number {
  switch (outcome.kind) {
    case 'delivered':
      return s.sent.run(outcome.etag ?? null, at, at, row.id, row.payloadSha256).changes;
    case 'retry':
      s.retry.run(retryAt === null ? 0 : 1, retryAt, outcome.reason, at, row.id, row.payloadSha256);
      return 0;
    case 'dead':
      if (s.dead.run(outcome.reason, at, row.id, row.payloadSha256).changes === 0) return 0;
      s.audit.write(at, 'gateway', 'dead-letter', row.dedupKey, JSON.stringify({ sink, reason: outcome.reason }));
      return 0;
    case 'conflict':
      if (s.conflict.run(theirEtag(outcome), outcome.reason, at, row.id, row.payloadSha256).changes === 0) return 0;
      s.conflictRow.run(row.dedupKey, sink, outcome.theirs ?? '', row.payload, row.payloadSha256, outcome.reason, at);
      s.audit.write(at, 'gateway', 'sink-conflict', row.dedupKey, JSON.stringify({ sink, reason: outcome.reason }));
      return 0;
  }
}

// The version the sink holds (a conflict's `etag`, delivery/contract.ts), kept so a person's forward sends it as If-Match.
function theirEtag(outcome: Extract<Outcome, { kind: 'conflict' }>): string | null {
  return outcome.etag ?? null;
}
