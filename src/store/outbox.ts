// The outbox side of the store: claiming due rows per sink and recording each row's outcome.
// Durability rules: a claim writes nothing (rows in flight are excluded in memory, and a claim starts after the
// sink's last claimed row, claim-cursor.ts: after a crash every unfinished row is simply due again); every batch's
// outcomes are recorded in ONE synchronous transaction, committed without waiting for fsync (a lost mark only means
// a re-delivery the sink absorbs); synchronous is restored after.
// An outcome applies only to the payload that was claimed: a correction queued while the old version was in flight
// (resolveConflict) changes the result's payload_sha256, so the old version's outcome leaves the correction pending.
// A payload is replaced only through this store (one writer per data directory, lock.ts), which says so here
// (payloadsReplaced): a delivery claimed since the last replacement is marked without reading its result again, and
// one claimed before it is checked against the payload_sha256 it carried (outbox-outcomes.ts).
// The payload is the result's, stored once for every sink: a row's result is one rowid lookup (layout.ts, the outbox
// ids), so a claim reads it by rowid and an outcome rewrites only the small outbox row.
import type Database from 'better-sqlite3';
import type { OutboxRow, Outcome } from '../delivery/contract.js';
import { ClaimCursors, type ClaimKey } from './claim-cursor.js';
import { resultIdSql } from './layout.js';
import { prepareOutcomes, recordBatch, type OutcomeBatch } from './outbox-outcomes.js';
import { OutboxOperator, type DeadLetterFilter } from './outbox-operator.js';

// No alias for outbox: the plans read `SEARCH outbox USING INDEX outbox_due` (test/delivery/outbox.test.ts).
// The ids BETWEEN the two parameters after the in-flight ones (or the cursor) are a group commit's whose fsync has not
// returned yet.
const PENDING = `outbox.sink = ? AND outbox.state = 'pending'`;
const SYNCED = `outbox.id NOT BETWEEN ? AND ?`;
const ORDER = `ORDER BY outbox.next_attempt_at, outbox.id LIMIT ?`;
const DUE = `WHERE ${PENDING} AND outbox.next_attempt_at <= ? AND outbox.id NOT IN (SELECT value FROM json_each(?)) AND ${SYNCED} ${ORDER}`;
// After the sink's cursor (claim-cursor.ts), in two index ranges: SQLite seeks a row value (next_attempt_at, id) > (?, ?)
// on its first column only, and a backlog written in one transaction shares one due time.
const DUE_SAME_AT = `WHERE ${PENDING} AND outbox.next_attempt_at = ? AND outbox.id > ? AND ${SYNCED} ORDER BY outbox.id LIMIT ?`;
const DUE_LATER = `WHERE ${PENDING} AND outbox.next_attempt_at > ? AND outbox.next_attempt_at <= ? AND ${SYNCED} ${ORDER}`;
// CROSS JOIN keeps the outbox outer (SQLite never reorders it): the due rows come off outbox_due, each result by rowid.
const ROW_COLUMNS = `outbox.id, outbox.sink, outbox.dedup_key, r.record_id, outbox.attempts, outbox.etag, r.payload, r.payload_sha256,
  outbox.next_attempt_at`;
type RawRow = [number, string, string, string, number, string | null, string, string, number];
const FROM = `SELECT ${ROW_COLUMNS} FROM outbox CROSS JOIN results r ON r.id = ${resultIdSql('outbox.id')}`;

/** The claim query (exported so a test can EXPLAIN it): parameters sink, now (steady time), JSON array of in-flight ids, the unsynced range, limit. */
export const CLAIM_SQL = `${FROM} ${DUE}`;
/** The claim after a cursor, its due time first: parameters sink, the cursor's due time and id, the unsynced range, limit. */
export const CLAIM_SAME_AT_SQL = `${FROM} ${DUE_SAME_AT}`;
/** Then the rows due later: parameters sink, the cursor's due time, now, the unsynced range, limit. */
export const CLAIM_LATER_SQL = `${FROM} ${DUE_LATER}`;
/** Whether rows let in after their fsync lie behind a cursor: by rowid over the group's ids, not the due index. */
export const PASSED_SQL = `SELECT 1 FROM outbox WHERE id BETWEEN ? AND ? AND +sink = ? AND +state = 'pending'
  AND (+next_attempt_at < ? OR (+next_attempt_at = ? AND id <= ?)) LIMIT 1`;

/** Outbox operations on the store's one SQLite connection. */
export class Outbox extends OutboxOperator {
  /** Per sink, the ids in flight, each with the payload generation it was claimed in. */
  private readonly inFlight = new Map<string, Map<number, number>>();
  /** Counts the replacements of results' payloads (payloadsReplaced). */
  private payloadGeneration = 0;
  private readonly cursors = new ClaimCursors();
  // Nothing is sent before it is durable: a group commit's rows stay out of every claim until its fsync has returned,
  // or a power cut could take back from the gateway a result a sink already holds.
  private unsynced: readonly [number, number] = [0, -1];
  private readonly due: Database.Statement;
  private readonly dueSameAt: Database.Statement;
  private readonly dueLater: Database.Statement;
  private readonly dueAt: Database.Statement;
  private readonly passedBy: Database.Statement;
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
    this.dueSameAt = db.prepare(CLAIM_SAME_AT_SQL).raw();
    this.dueLater = db.prepare(CLAIM_LATER_SQL).raw();
    this.dueAt = db.prepare(`SELECT next_attempt_at FROM outbox ${DUE}`).pluck();
    this.passedBy = db.prepare(PASSED_SQL).pluck();
    const stmts = prepareOutcomes(db);
    this.record = db.transaction((batches: readonly OutcomeBatch[]) => {
      const at = this.now();
      let marked = 0;
      for (const batch of batches) {
        const flying = this.flying(batch.sink);
        const unchanged = (id: number): boolean => flying.get(id) === this.payloadGeneration;
        marked += recordBatch(stmts, batch, at, unchanged, (id, dueAt) => this.backInDue(batch.sink, id, dueAt));
      }
      return marked;
    });
  }

  /** Up to `limit` pending rows of `sink` due now and not already in flight, oldest due first; they stay in flight until recorded or released. */
  claimDue(sink: string, limit: number): OutboxRow[] {
    const flying = this.flying(sink);
    const now = this.dueNow();
    const cursor = this.cursors.of(sink);
    let raw: RawRow[] | undefined;
    if (cursor !== undefined) {
      const after = this.claimAfter(sink, cursor, now, limit);
      // Nothing after the cursor: rows put back behind it by another process are looked for from the first due row.
      // A row in flight after it (claimed before the cursor was last forgotten) makes the full claim step over it.
      if (after.length > 0 && after.every((r) => !flying.has(r[0]))) raw = after;
    }
    raw ??= this.due.all(sink, now, JSON.stringify([...flying.keys()]), ...this.unsynced, limit) as RawRow[];
    const last = raw.at(-1);
    if (last !== undefined) this.cursors.moveTo(sink, last[8], last[0]);
    return raw.map(([id, rowSink, dedupKey, recordId, attempts, etag, payload, payloadSha256]) => {
      flying.set(id, this.payloadGeneration);
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
    let recorded = false;
    try {
      // Only deliveries write enough to need checkpoints soon; a sink that is down must not keep a thread running.
      const marked = this.record(batches);
      recorded = true;
      if (marked > 0) this.afterRecord();
    } finally {
      this.db.pragma(`synchronous = ${level}`);
      for (const { sink, rows } of batches) {
        this.land(sink, rows);
        // Rolled back: every row is due again where it was, behind the cursor.
        if (!recorded) this.cursors.forget(sink);
      }
    }
  }

  /** Returns claimed rows to the due set without recording anything (a batch abandoned before its outcome). */
  release(sink: string, rows: readonly OutboxRow[]): void {
    this.land(sink, rows);
    if (rows.length > 0) this.cursors.forget(sink);
  }

  /** Rows of `sink` currently claimed and not yet recorded. */
  inFlightCount(sink: string): number {
    return this.flying(sink).size;
  }

  /** Earliest next_attempt_at (steady time) of a pending row of `sink` that is not in flight, or null when none is. */
  nextDueAt(sink: string): number | null {
    const at = this.dueAt.get(sink, Number.MAX_SAFE_INTEGER, JSON.stringify([...this.flying(sink).keys()]), ...this.unsynced, 1) as number | undefined;
    return at ?? null;
  }

  /** Keeps the rows with ids `from`..`to` out of claims (a group committed, not yet fsynced); null lets them in. */
  holdUnsynced(range: readonly [number, number] | null): void {
    const [from, to] = this.unsynced;
    const next = range ?? [0, -1];
    // The ids let in: those held before and not now (a hold only moves up: the groups synced are the oldest).
    const letIn: [number, number] = next[0] > next[1] ? [from, to] : [from, Math.min(to, next[0] - 1)];
    if (letIn[0] <= letIn[1]) {
      for (const [sink, c] of this.cursors.all()) {
        if (this.passedBy.get(letIn[0], letIn[1], sink, c.at, c.at, c.id) !== undefined) this.cursors.forget(sink);
      }
    }
    this.unsynced = next;
  }

  /** Forgets every in-flight claim (after the drains have stopped); the rows are due again as they were. */
  resetInFlight(): void {
    this.inFlight.clear();
    this.cursors.forget();
  }

  /** Forgets where the claims stood: rows were put back among the due ones (a person's resolution of a conflict). */
  forgetCursors(): void {
    this.cursors.forget();
  }

  /** A result's payload may have been replaced: the outcomes of rows claimed before now are checked against theirs. */
  payloadsReplaced(): void {
    this.payloadGeneration++;
  }

  override retryDeadLetters(filter: DeadLetterFilter, actor: string): number {
    const retried = super.retryDeadLetters(filter, actor);
    if (retried > 0) this.cursors.forget();
    return retried;
  }

  private claimAfter(sink: string, cursor: ClaimKey, now: number, limit: number): RawRow[] {
    const same = this.dueSameAt.all(sink, cursor.at, cursor.id, ...this.unsynced, limit) as RawRow[];
    if (same.length === limit) return same;
    return same.concat(this.dueLater.all(sink, cursor.at, now, ...this.unsynced, limit - same.length) as RawRow[]);
  }

  // A row of `sink` recorded and still pending: due at `dueAt`, or where it was (null).
  private backInDue(sink: string, id: number, dueAt: number | null): void {
    if (dueAt === null || this.cursors.passed(sink, dueAt, id)) this.cursors.forget(sink);
  }

  private land(sink: string, rows: readonly OutboxRow[]): void {
    const flying = this.flying(sink);
    for (const row of rows) flying.delete(row.id);
  }

  private flying(sink: string): Map<number, number> {
    let ids = this.inFlight.get(sink);
    if (!ids) {
      ids = new Map();
      this.inFlight.set(sink, ids);
    }
    return ids;
  }
}
