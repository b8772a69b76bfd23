// Writing one message's results: the dedup upsert, the outbox rows of a first insert, conflicts, audit.
// Every method runs inside the caller's synchronous db.transaction; statements are prepared once.
// Invariant 4: a replay never changes a stored clinical field. The upsert's WHERE lets only an identical
// clinical digest bump load_count; a different one returns no row, and the result is kept aside as a conflict.
import { hash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Rejection } from '../message.js';
import { buildPayload, type ResultPayload } from '../payload.js';
import { clinicalDigest, keyedResultSchema, type KeyedResult } from '../result.js';
import { differingFields, resultColumns, rowToResult, type ResultRow } from './stored-result.js';
import { AuditLog, OUTBOX_SLOTS, outboxIdOf } from './layout.js';

/** What became of one result. */
export type ResultFate = 'inserted' | 'absorbed' | 'conflict';

/** Counts of result fates for one message. */
export interface Tally {
  inserted: number;
  absorbed: number;
  conflicts: number;
}

/** Where the results being written came from and who is writing them. */
export interface WriteContext {
  capture: { id: number; receivedAt: number; rawSha256: string; clock?: 'unsynchronised' };
  now: number;
  /** The steady time (steady-time.ts) a new outbox row is due at: now, on the clock that never steps. */
  due: number;
  actor: string;
  /** Keys this capture was already counted for (a reprocess); null on first ingest. */
  counted: ReadonlySet<string> | null;
}

/** Splits decoded results into valid keyed results and rejections; an invalid result is data, never an exception. */
export function validateResults(results: readonly unknown[]): { valid: KeyedResult[]; invalid: Rejection[] } {
  const valid: KeyedResult[] = [];
  const invalid: Rejection[] = [];
  for (const candidate of results) {
    const parsed = keyedResultSchema.safeParse(candidate);
    if (parsed.success) {
      valid.push(parsed.data);
      continue;
    }
    // Only paths and zod's own messages: the reason must never echo patient data.
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'result'}: ${i.message}`).join('; ');
    const c = (candidate ?? {}) as { accession?: unknown; source?: { analyzerCode?: unknown } };
    const rejection: Rejection = { reason: `invalid result: ${issues}` };
    if (typeof c.source?.analyzerCode === 'string') rejection.analyzerCode = c.source.analyzerCode;
    if (typeof c.accession === 'string') rejection.accession = c.accession;
    invalid.push(rejection);
  }
  return { valid, invalid };
}

/** The dedup upsert of one result (exported for fixtures that stage outbox rows): columns as `resultColumns`. */
export const INSERT_RESULT = `
  INSERT INTO results (dedup_key, record_id, accession, analyte_loinc, instrument_id, resulted_at, value_text, value,
    comparator, unit, status, flags, reference_range, qc, source, analyzer_code, clinical_digest,
    capture_id, first_seen_at, last_seen_at, payload, payload_sha256, status_code, bound)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (resulted_at, dedup_key) DO UPDATE SET load_count = load_count + 1, last_seen_at = excluded.last_seen_at
  WHERE results.clinical_digest = excluded.clinical_digest
  RETURNING id, load_count`;

// The first insert of a key, the common case: no RETURNING, so SQLite skips collecting the returned row (about 6 % of
// ingest). When it inserts nothing the key is stored already, and INSERT_RESULT then absorbs it or finds a conflict.
const INSERT_NEW_RESULT = INSERT_RESULT.slice(0, INSERT_RESULT.indexOf('ON CONFLICT')) + 'ON CONFLICT (resulted_at, dedup_key) DO NOTHING';

// A message's outbox rows (and its audit entries, layout.ts) go in one multi-row INSERT each, up to CHUNK results a statement: one statement
// per result costs a message about 15 % of its ingest time in statement overhead (bench/ingest).
const CHUNK = 32;

// The outbox rows of `results` results for every sink (the sinks are fixed for a store's life). Rows carry no payload:
// a claim reads the result's, so it is stored once however many sinks there are.
function insertOutboxSql(sinks: readonly string[], results: number): string {
  const one = sinks.map((sink) => `(?, ${quote(sink)}, ?, 'pending', 0, ?, ?, ?)`).join(', ');
  return `INSERT INTO outbox (id, sink, dedup_key, state, attempts, next_attempt_at, created_at, updated_at)
    VALUES ${Array.from({ length: results }, () => one).join(', ')}`;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** Prepared multi-row INSERTs by row count, made on first use. */
class RowsStatements {
  private readonly byCount = new Map<number, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly sql: (count: number) => string,
    private readonly width: number,
  ) {}

  /** Inserts the rows whose parameters are `flat` (`width` per row), CHUNK rows a statement. */
  run(flat: readonly unknown[]): void {
    const rows = flat.length / this.width;
    for (let from = 0; from < rows; from += CHUNK) {
      const count = Math.min(CHUNK, rows - from);
      let statement = this.byCount.get(count);
      if (statement === undefined) {
        statement = this.db.prepare(this.sql(count));
        this.byCount.set(count, statement);
      }
      statement.run(flat.slice(from * this.width, (from + count) * this.width));
    }
  }
}

/** A message's outbox rows and audit entries, written by writeAll after its results (flat parameters: see the SQL above). */
interface MessageRows {
  outbox: unknown[];
  audit: unknown[];
}

const CONFLICT_COLUMNS = `INSERT INTO conflicts (dedup_key, origin, stored_payload, incoming_payload, incoming_digest,
  capture_id, reason, detected_at) VALUES (?, 'ingest', ?, ?, ?, ?, ?, ?)`;

/** The prepared statements of ingest and reprocess, bound to one connection. */
export class ResultWriter {
  private readonly insertResult: Database.Statement;
  private readonly insertNewResult: Database.Statement;
  private readonly insertOutbox: RowsStatements | null;
  private readonly recordConflict: Database.Statement;
  private readonly recordConflictOnce: Database.Statement;
  private readonly storedRow: Database.Statement;
  private readonly storedDigest: Database.Statement;
  private readonly auditLog: AuditLog;
  private readonly slots: number;
  /** The slots of the sinks that take quality-control results. */
  private readonly qcSlots: number[];
  private readonly insertQcRow: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly sinks: readonly string[],
    qcSinks: readonly string[] = [],
  ) {
    if (sinks.length > OUTBOX_SLOTS) throw new RangeError(`at most ${OUTBOX_SLOTS} sinks, got ${sinks.length}`);
    this.insertResult = db.prepare(INSERT_RESULT);
    this.insertNewResult = db.prepare(INSERT_NEW_RESULT);
    this.slots = sinks.length;
    this.qcSlots = sinks.flatMap((sink, slot) => (qcSinks.includes(sink) ? [slot] : []));
    this.insertQcRow = db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`);
    this.insertOutbox = sinks.length > 0 ? new RowsStatements(db, (n) => insertOutboxSql(sinks, n), 5 * sinks.length) : null;
    // A repeated identical conflicting replay is the same conflict seen again, not a new one.
    this.recordConflict = db.prepare(`${CONFLICT_COLUMNS} ON CONFLICT (dedup_key, origin, incoming_digest) DO UPDATE SET occurrences = occurrences + 1`);
    this.recordConflictOnce = db.prepare(`${CONFLICT_COLUMNS} ON CONFLICT (dedup_key, origin, incoming_digest) DO NOTHING`);
    this.storedRow = db.prepare('SELECT * FROM results WHERE resulted_at = ? AND dedup_key = ?');
    this.storedDigest = db.prepare('SELECT clinical_digest FROM results WHERE resulted_at = ? AND dedup_key = ?').pluck();
    this.auditLog = new AuditLog(db);
  }

  /** Writes every result of a message; returns the tally and the keys now counted for this capture. */
  writeAll(results: readonly KeyedResult[], ctx: WriteContext): { tally: Tally; keys: string[] } {
    const tally: Tally = { inserted: 0, absorbed: 0, conflicts: 0 };
    const keys: string[] = [];
    const rows: MessageRows = { outbox: [], audit: [] };
    for (const result of results) {
      const { fate, key } = this.write(result, ctx, rows);
      keys.push(key);
      if (fate === 'inserted') tally.inserted++;
      else if (fate === 'absorbed') tally.absorbed++;
      else tally.conflicts++;
    }
    this.insertOutbox?.run(rows.outbox);
    this.auditLog.writeFlat(rows.audit);
    return { tally, keys };
  }

  /** Appends one audit entry. */
  audit(at: number, actor: string, action: string, subject: string | null, detail: string | null): void {
    this.auditLog.write(at, actor, action, subject, detail);
  }

  private write(result: KeyedResult, ctx: WriteContext, rows: MessageRows): { fate: ResultFate; key: string } {
    const captureId = ctx.capture.id;
    const stamped: KeyedResult = { ...result, source: { ...result.source, captureId } };
    const payload = buildPayload(stamped, ctx.capture);
    const key = payload.dedupKey;
    const digest = clinicalDigest(result);
    // Serialized and hashed once: the stored payload, its digest and a conflict's incoming version are this text.
    const json = JSON.stringify(payload);
    const recounted = ctx.counted?.has(key) ? this.recount(payload, json, digest, ctx, rows) : null;
    if (recounted !== null) return { fate: recounted, key };
    const columns = resultColumns(stamped, key, payload.recordId, digest, ctx.now, json, hash('sha256', json));
    const first = this.insertNewResult.run(columns);
    const row =
      first.changes === 1
        ? { id: Number(first.lastInsertRowid), load_count: 1 }
        : (this.insertResult.get(columns) as { id: number; load_count: number } | undefined);
    let fate: ResultFate;
    if (row === undefined) {
      this.conflict(payload, json, digest, ctx, this.recordConflict);
      fate = 'conflict';
    } else if (row.load_count === 1) {
      // QC results are kept for the record but are not patient results: forwarded only to a sink that takes them.
      if (!result.qc) {
        for (let slot = 0; slot < this.slots; slot++) rows.outbox.push(outboxIdOf(row.id, slot), key, ctx.due, ctx.now, ctx.now);
      } else {
        // Rare, and for a subset of the sinks: a row at a time rather than a multi-row statement per subset.
        for (const slot of this.qcSlots) this.insertQcRow.run(outboxIdOf(row.id, slot), this.sinks[slot], key, ctx.due, ctx.now, ctx.now);
      }
      fate = 'inserted';
    } else {
      fate = 'absorbed';
    }
    rows.audit.push(ctx.now, ctx.actor, fate, key, `{"captureId":${captureId}}`);
    return { fate, key };
  }

  // The message was received once: a result this capture was already counted for changes nothing,
  // unless the corrected configuration now reads it differently, which is a conflict a person must see.
  // Null when the stored row is gone (retention): the result is then written as on first ingest.
  private recount(payload: ResultPayload, json: string, digest: string, ctx: WriteContext, rows: MessageRows): ResultFate | null {
    const stored = this.storedDigest.get(payload.result.resultedAt, payload.dedupKey) as string | undefined;
    if (stored === undefined) return null;
    if (stored === digest) return 'absorbed';
    if (this.conflict(payload, json, digest, ctx, this.recordConflictOnce) > 0) {
      rows.audit.push(ctx.now, ctx.actor, 'conflict', payload.dedupKey, `{"captureId":${ctx.capture.id}}`);
    }
    return 'conflict';
  }

  // Returns the number of conflict rows written (0 when recordConflictOnce finds it already recorded).
  private conflict(incoming: ResultPayload, json: string, digest: string, ctx: WriteContext, statement: Database.Statement): number {
    const row = this.storedRow.get(incoming.result.resultedAt, incoming.dedupKey) as ResultRow | undefined;
    if (row === undefined) throw new Error(`conflict on ${incoming.dedupKey} but no stored result`);
    // The stored version is the payload the sinks are sent, exactly.
    const reason = `same key, different clinical content: ${differingFields(rowToResult(row), incoming.result).join(', ')}`;
    const args = [incoming.dedupKey, row.payload, json, digest, ctx.capture.id, reason, ctx.now];
    return statement.run(...args).changes;
  }
}
