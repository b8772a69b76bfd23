// The store's layout: what each table holds and the rules that tie them together. Every module of the store (and
// every test that reads the database) takes the id scheme, the states and the audit writer from here.
//
// labgate.db is one SQLite database in WAL mode with synchronous=FULL: a transaction that returned is on the disk,
// except a group commit's (group-commit.ts), which is on the disk once the WAL fsync that follows it has returned.
//   captures   the raw journal: every message exactly as received, accepted or rejected with its reasons
//              (ARCHITECTURE.md invariant 2); retention prunes it by id, which follows receipt.
//   results    one row per dedup key and result time: the keyed result, its payload (the JSON every sink is sent)
//              and payload_sha256, stored once however many sinks there are; the provenance is the payload's alone
//              (results.source is '' from store schema 10 on, stored-result.ts).
//   outbox     one small row per result and sink: delivery state only (state, attempts, next attempt, etag).
//   conflicts  the same key with other clinical content, kept aside for a person (invariant 4).
//   audit      append-only: who did what to which key, and when (`AuditLog` below is its one writer).
//   outbox_sent, outbox_sent_minutes, instrument_days, dispatches, order_days: counters, the orders analyzers were
//              sent (each dispatch drained to the LIMS like an outbox row) and the two-way figures of each day.
//
// Outbox ids. A result's outbox rows have the ids `results.id × OUTBOX_SLOTS + slot`, where slot is the sink's place
// in the configured sinks (fixed for a store's life; a forwarded correction to a sink added later takes a free slot).
// So a row's result is one rowid lookup (`id / OUTBOX_SLOTS`, integer division in SQL) and a result's rows are one
// rowid range, with no index on dedup_key to slow ingest. Rows written before this scheme (an older database) have
// other ids; the few places that meet them also match on dedup_key.
//
// Outbox states. `pending` (due at next_attempt_at) → `sent` | `dead` (a record-specific permanent failure, with its
// reason) | `conflict` (the sink holds other content). A person moves `dead` back to `pending` (retry) or deletes it
// (purge), and a conflict's forward makes its rows `pending` again. A claim writes nothing: rows in flight are kept in
// memory, so after a crash every unfinished row is simply due again.
//
// The payload-hash guard. An outcome applies only to the payload that was claimed: every outcome's UPDATE requires the
// row's result to still hold the claimed payload_sha256 (`claimedPayloadIs`). A correction queued while the old
// version was in flight changes the hash, so the old version's outcome leaves the correction pending.
import type Database from 'better-sqlite3';

/** How many outbox ids each result owns: at most this many sinks. */
export const OUTBOX_SLOTS = 16;

/** The delivery states of an outbox row. */
export type OutboxState = 'pending' | 'sent' | 'dead' | 'conflict';

/** The outbox id of a result's row in `slot`; ids stay in arrival order, as results ids are. */
export function outboxIdOf(resultId: number, slot: number): number {
  return resultId * OUTBOX_SLOTS + slot;
}

/** The result an outbox row belongs to (rows written under the slot scheme). */
export function resultIdOf(outboxId: number): number {
  return Math.floor(outboxId / OUTBOX_SLOTS);
}

/** The first and last outbox id a result owns, for `id BETWEEN ? AND ?`. */
export function outboxRangeOf(resultId: number): [number, number] {
  return [outboxIdOf(resultId, 0), outboxIdOf(resultId, OUTBOX_SLOTS - 1)];
}

/** SQL: the results.id of the outbox row whose id column is `outboxId` (e.g. `o.id`). */
export function resultIdSql(outboxId: string): string {
  return `${outboxId} / ${OUTBOX_SLOTS}`;
}

/** SQL condition of every outcome: the row's (`outbox`) result still holds the payload hash bound at `param`. */
export function claimedPayloadIs(param: string): string {
  return `(SELECT payload_sha256 FROM results WHERE id = ${resultIdSql('outbox.id')}) = ${param}`;
}

/** One audit entry; `subject` is the dedup key it concerns (none for a run of retention), `detail` JSON text. */
export interface AuditEntry {
  at: number;
  actor: string;
  action: string;
  subject: string | null;
  detail: string | null;
}

// Entries of one message go in multi-row INSERTs of up to CHUNK rows: one statement per entry costs a message about
// 15 % of its ingest time in statement overhead (bench/ingest).
const CHUNK = 32;

/** The one writer of the audit table, on the store's connection; it writes inside the caller's transaction. */
export class AuditLog {
  private readonly byCount = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** Appends one entry. */
  write(at: number, actor: string, action: string, subject: string | null, detail: string | null): void {
    this.statement(1).run(at, actor, action, subject, detail);
  }

  /** Appends many entries given flat (`at, actor, action, subject, detail` per entry), CHUNK a statement. */
  writeFlat(flat: readonly unknown[]): void {
    const entries = flat.length / 5;
    for (let from = 0; from < entries; from += CHUNK) {
      const count = Math.min(CHUNK, entries - from);
      this.statement(count).run(flat.slice(from * 5, (from + count) * 5));
    }
  }

  private statement(count: number): Database.Statement {
    let statement = this.byCount.get(count);
    if (statement === undefined) {
      const values = Array.from({ length: count }, () => '(?, ?, ?, ?, ?)').join(', ');
      statement = this.db.prepare(`INSERT INTO audit (at, actor, action, subject, detail) VALUES ${values}`);
      this.byCount.set(count, statement);
    }
    return statement;
  }
}
