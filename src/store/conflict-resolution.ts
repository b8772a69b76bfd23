// Resolving a conflict: a person's audited decision, never the gateway's (ARCHITECTURE.md invariant 4).
//   keep     labgate's stored version stays; nothing is sent.
//   forward  origin 'ingest': the incoming version becomes the stored result as a correction and goes to every sink:
//            the result's payload (stored once for every sink) is replaced and each of its outbox rows is queued
//            again, keeping its ETag, so the LIMS
//            gets an If-Match write (a correction of the version it holds), not a create.
//            origin a sink: that sink holds another version; labgate's own is queued to it again as a correction.
// Every method runs inside the store's synchronous transaction; statements are prepared once.
import { hash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ResultPayload } from '../payload.js';
import { clinicalContent, clinicalDigest, upgradeStoredResult, type StoredKeyedResult } from '../result.js';
import { AuditLog, OUTBOX_SLOTS, outboxIdOf, outboxRangeOf } from './layout.js';

/** Keep the stored version, or forward the other one as a correction. */
export type ConflictChoice = 'keep' | 'forward';

/** What resolving did; `queued` names the sinks a correction was queued to. */
export type Resolution = { kind: 'done'; queued: string[] } | { kind: 'not-found' } | { kind: 'already-resolved' };

interface ConflictRow {
  id: number;
  dedup_key: string;
  origin: string;
  stored_payload: string;
  incoming_payload: string;
  resolution: string | null;
}

type OutboxSlot = { id: number; sink: string };
type StoredRef = { id: number; qc: number; payload: string };

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The statements of conflict resolution on the store's connection. */
export class ConflictResolver {
  private readonly find: Database.Statement;
  private readonly mark: Database.Statement;
  private readonly resultOf: Database.Statement;
  private readonly rowsOf: Database.Statement;
  private readonly usedIds: Database.Statement;
  private readonly conflictRows: Database.Statement;
  private readonly correct: Database.Statement;
  private readonly requeueWith: Database.Statement;
  private readonly requeue: Database.Statement;
  private readonly insertRow: Database.Statement;
  private readonly audit: AuditLog;
  private readonly repayload: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly sinks: readonly string[],
    private readonly qcSinks: readonly string[] = [],
  ) {
    this.find = db.prepare('SELECT id, dedup_key, origin, stored_payload, incoming_payload, resolution FROM conflicts WHERE id = ?');
    this.mark = db.prepare('UPDATE conflicts SET resolution = ?, resolved_by = ?, resolved_at = ? WHERE id = ? AND resolution IS NULL');
    this.resultOf = db.prepare('SELECT id, qc, payload FROM results WHERE resulted_at = ? AND dedup_key = ?');
    this.repayload = db.prepare('UPDATE results SET payload = ?, payload_sha256 = ? WHERE id = ?');
    this.rowsOf = db.prepare('SELECT id, sink FROM outbox WHERE id BETWEEN ? AND ? AND dedup_key = ? ORDER BY id');
    this.usedIds = db.prepare('SELECT id FROM outbox WHERE id BETWEEN ? AND ?').pluck();
    // Rows written before outbox ids were slots (an older database): few, on the partial index.
    this.conflictRows = db.prepare(`SELECT id, sink FROM outbox WHERE state = 'conflict' AND sink = ? AND dedup_key = ?`);
    this.correct = db.prepare(`UPDATE results SET value_text = ?, value = ?, comparator = ?, bound = ?, unit = ?, status = ?,
      status_code = ?, flags = ?, reference_range = ?, source = ?, analyzer_code = ?, capture_id = ?, clinical_digest = ?, payload = ?,
      payload_sha256 = ? WHERE id = ?`);
    this.requeueWith = db.prepare(`UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL,
      sent_at = NULL, updated_at = ? WHERE id = ?`);
    this.requeue = db.prepare(`UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL,
      updated_at = ? WHERE id = ?`);
    this.insertRow = db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`);
    this.audit = new AuditLog(db);
  }

  /** Resolves conflict `id` as `choice`, audited with `actor` at `now`; what it queues is due at `due` (steady time). */
  resolve(id: number, choice: ConflictChoice, actor: string, now: number, due: number): Resolution {
    const conflict = this.find.get(id) as ConflictRow | undefined;
    if (conflict === undefined) return { kind: 'not-found' };
    if (conflict.resolution !== null) return { kind: 'already-resolved' };
    let queued: string[] = [];
    if (choice === 'forward') {
      queued = conflict.origin === 'ingest' ? this.forwardIncoming(conflict, now, due) : this.forwardToSink(conflict, now, due);
    }
    const resolution = choice === 'keep' ? 'kept' : 'forwarded';
    this.mark.run(resolution, actor, now, id);
    const detail = { conflictId: id, origin: conflict.origin, queued };
    this.audit.write(now, actor, `conflict-${resolution}`, conflict.dedup_key, JSON.stringify(detail));
    return { kind: 'done', queued };
  }

  // The incoming version replaces the stored one, then goes to every sink with a row, and every configured sink.
  private forwardIncoming(conflict: ConflictRow, now: number, due: number): string[] {
    // A conflict recorded before the upgrade may hold a result in its older form (store migration 3).
    const recorded = JSON.parse(conflict.incoming_payload) as Omit<ResultPayload, 'result'> & { result: StoredKeyedResult };
    const r = upgradeStoredResult(recorded.result);
    const incoming: ResultPayload = { ...recorded, result: r };
    const stored = this.resultOf.get(r.resultedAt, conflict.dedup_key) as StoredRef | undefined;
    if (stored === undefined) throw new Error(`conflict ${conflict.id} names ${conflict.dedup_key}, which is not stored`);
    const digest = clinicalDigest(r);
    // `supersedes` names the version being replaced, so central PostgreSQL applies the correction only over exactly
    // that version (compare-and-set, sinks/postgres-statement.ts); the LIMS ignores it and uses its ETag instead.
    const replaced = (JSON.parse(stored.payload) as ResultPayload).result;
    const payload = JSON.stringify({ ...incoming, supersedes: clinicalContent(replaced) } satisfies ResultPayload);
    // A new payload_sha256 also voids the outcome of the old version, if it is in flight now (outbox.ts).
    const sha = hash('sha256', payload);
    this.correct.run(
      r.valueText,
      r.value,
      r.comparator,
      r.bound,
      r.unit,
      r.status,
      r.statusCode,
      JSON.stringify(r.flags),
      r.referenceRange,
      JSON.stringify(r.source),
      r.source.analyzerCode,
      r.source.captureId,
      digest,
      payload,
      sha,
      stored.id,
    );
    // QC results are kept for the record, forwarded only to the sinks that take them (ingest.ts).
    const takes = (sink: string): boolean => stored.qc !== 1 || this.qcSinks.includes(sink);
    const rows = this.slotsOf(stored.id, conflict.dedup_key).filter((row) => takes(row.sink));
    for (const row of rows) this.requeueWith.run(due, now, row.id);
    const queued = rows.map((row) => row.sink);
    for (const sink of this.sinks) {
      if (queued.includes(sink) || !takes(sink)) continue;
      this.insertRow.run(this.freeSlot(stored.id), sink, conflict.dedup_key, due, now, now);
      queued.push(sink);
    }
    return queued;
  }

  // The sink holds another version: labgate's row for it is queued again as it is (its payload is labgate's version),
  // with the ETag the conflict outcome recorded on it (the sink's current one, when the sink reported it; else ours).
  private forwardToSink(conflict: ConflictRow, now: number, due: number): string[] {
    const ours = JSON.parse(conflict.incoming_payload) as ResultPayload;
    const stored = this.resultOf.get(ours.result.resultedAt, conflict.dedup_key) as StoredRef | undefined;
    if (stored !== undefined) this.nameSupersededVersion(stored, conflict);
    const slots = stored === undefined ? [] : this.slotsOf(stored.id, conflict.dedup_key);
    const rows = slots.length > 0 ? slots : (this.conflictRows.all(conflict.origin, conflict.dedup_key) as OutboxSlot[]);
    const mine = rows.filter((row) => row.sink === conflict.origin);
    for (const row of mine) this.requeue.run(due, now, row.id);
    return mine.length > 0 ? [conflict.origin] : [];
  }

  // A sink that reported what it holds with a `supersedes` (PostgreSQL) gets labgate's version as a compare-and-set
  // correction of exactly that; a sink that did not (the LIMS: its ETag does the same job) leaves the payload alone.
  private nameSupersededVersion(stored: StoredRef, conflict: ConflictRow): void {
    const theirs = parseJson(conflict.stored_payload) as { supersedes?: unknown } | undefined;
    if (typeof theirs?.supersedes !== 'string') return;
    const payload = JSON.stringify({ ...(JSON.parse(stored.payload) as ResultPayload), supersedes: theirs.supersedes } satisfies ResultPayload);
    this.repayload.run(payload, hash('sha256', payload), stored.id);
  }

  private slotsOf(resultId: number, key: string): OutboxSlot[] {
    return this.rowsOf.all(...outboxRangeOf(resultId), key) as OutboxSlot[];
  }

  private freeSlot(resultId: number): number {
    const taken = new Set(this.usedIds.all(...outboxRangeOf(resultId)) as number[]);
    for (let slot = 0; slot < OUTBOX_SLOTS; slot++) {
      const id = outboxIdOf(resultId, slot);
      if (!taken.has(id)) return id;
    }
    throw new Error(`result ${resultId} has no free outbox slot`);
  }
}
