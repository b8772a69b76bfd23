// Dispatches the LIMS refused for good, in an operator's hands like the outbox's dead letters (outbox-operator.ts):
// listed, made pending again once the cause is fixed, or purged; every change audited with the operator as actor.
// A dispatch's key is `orderId|instrumentId`; its sink is DISPATCH_SINK.
import type Database from 'better-sqlite3';
import { DISPATCH_SINK } from '../delivery/dispatch-contract.js';
import { AuditLog } from './layout.js';
import type { DeadLetter, DeadLetterFilter } from './outbox-operator.js';

/** A refused dispatch, with the specimen it was for. */
export interface DispatchDeadLetter extends DeadLetter {
  accession: string;
}

const COLUMNS = `id, order_id || '|' || instrument_id AS dedupKey, attempts, last_error AS reason, dispatched_at AS createdAt,
  updated_at AS updatedAt, accession`;

/** The operator's view of the dispatches table. */
export class DispatchDeadLetters {
  private readonly list: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    /** Steady time (steady-time.ts): what due times are written in. */
    private readonly dueNow: () => number = now,
  ) {
    this.list = db.prepare(`SELECT ${COLUMNS} FROM dispatches WHERE state = 'dead' AND (@key IS NULL OR order_id || '|' || instrument_id = @key)
      ORDER BY id LIMIT @limit`);
  }

  /** Refused dispatches matching the filter (none when it names another sink), oldest first. */
  deadLetters(filter: DeadLetterFilter, limit = 1000): DispatchDeadLetter[] {
    if (filter.sink !== undefined && filter.sink !== DISPATCH_SINK) return [];
    const rows = this.list.all({ key: filter.key ?? null, limit }) as Omit<DispatchDeadLetter, 'sink'>[];
    return rows.map((r) => ({ ...r, sink: DISPATCH_SINK }));
  }

  /** Makes matching refused dispatches pending again (due now); audited per row. */
  retryDeadLetters(filter: DeadLetterFilter, actor: string): number {
    return this.operate(
      filter,
      actor,
      'dead-letter-retry',
      `UPDATE dispatches SET state = 'pending', attempts = 0, next_attempt_at = @due, updated_at = @at WHERE id = @id AND state = 'dead'`,
    );
  }

  /** Deletes matching refused dispatches; audited per row. Download mode sends such an order again if the LIMS still lists it as pending. */
  purgeDeadLetters(filter: DeadLetterFilter, actor: string): number {
    return this.operate(filter, actor, 'dead-letter-purge', `DELETE FROM dispatches WHERE id = @id AND state = 'dead'`);
  }

  private operate(filter: DeadLetterFilter, actor: string, action: string, sql: string): number {
    if (!filter.all && filter.sink === undefined && filter.key === undefined) throw new RangeError('a dead-letter operation needs a sink, a key, or all');
    const statement = this.db.prepare(sql);
    const audit = new AuditLog(this.db);
    return this.db
      .transaction((): number => {
        const at = this.now();
        const due = this.dueNow();
        const rows = this.deadLetters(filter, Number.MAX_SAFE_INTEGER);
        for (const r of rows) {
          statement.run({ id: r.id, at, due });
          audit.write(at, actor, action, r.dedupKey, JSON.stringify({ sink: DISPATCH_SINK, reason: r.reason }));
        }
        return rows.length;
      })
      .immediate();
  }
}
