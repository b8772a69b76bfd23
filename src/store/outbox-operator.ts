// What an operator sees and does with the outbox: counts per sink, dead letters listed, retried, purged.
// Every operator change is audited with the operator as actor (ARCHITECTURE.md: nothing is silently dropped).
import type Database from 'better-sqlite3';

/** One sink's outbox at a glance. */
export interface SinkCounts {
  sink: string;
  pending: number;
  sent: number;
  dead: number;
  conflict: number;
  /** created_at of the oldest pending row (epoch ms), or null. */
  oldestPendingAt: number | null;
}

/** A dead-lettered row, as listed for an operator (no payload: it carries patient data). */
export interface DeadLetter {
  id: number;
  sink: string;
  dedupKey: string;
  attempts: number;
  reason: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Which dead letters an operator command addresses; at least one of the three must be given. */
export interface DeadLetterFilter {
  sink?: string;
  key?: string;
  all?: boolean;
}

const FILTER = `state = 'dead' AND (@sink IS NULL OR sink = @sink) AND (@key IS NULL OR dedup_key = @key)`;

/** The operator's view of the outbox; the Outbox class extends it with the delivery side. */
export class OutboxOperator {
  constructor(
    protected readonly db: Database.Database,
    protected readonly now: () => number,
  ) {}

  /** Pending, sent, dead and conflict counts and the oldest pending row, per sink (a full scan: for status, not hot paths). */
  counts(): SinkCounts[] {
    const rows = this.db
      .prepare(`SELECT sink, state, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox GROUP BY sink, state ORDER BY sink`)
      .all() as { sink: string; state: string; n: number; oldest: number }[];
    const bySink = new Map<string, SinkCounts>();
    for (const r of rows) {
      const c = bySink.get(r.sink) ?? { sink: r.sink, pending: 0, sent: 0, dead: 0, conflict: 0, oldestPendingAt: null };
      if (r.state === 'pending') {
        c.pending = r.n;
        c.oldestPendingAt = r.oldest;
      } else if (r.state === 'sent' || r.state === 'dead' || r.state === 'conflict') c[r.state] = r.n;
      bySink.set(r.sink, c);
    }
    return [...bySink.values()];
  }

  /** Pending rows of one sink, counted on the partial index (cheap enough for /metrics). */
  pendingCount(sink: string): number {
    return this.db.prepare(`SELECT COUNT(*) FROM outbox WHERE sink = ? AND state = 'pending'`).pluck().get(sink) as number;
  }

  /** Rows of `sink` marked sent at or after `since` (epoch ms): the measured delivery rate. */
  sentSince(sink: string, since: number): number {
    return this.db.prepare(`SELECT COUNT(*) FROM outbox WHERE sink = ? AND state = 'sent' AND sent_at >= ?`).pluck().get(sink, since) as number;
  }

  /** Dead letters matching the filter, oldest first. */
  deadLetters(filter: DeadLetterFilter, limit = 1000): DeadLetter[] {
    return this.db
      .prepare(
        `SELECT id, sink, dedup_key AS dedupKey, attempts, last_error AS reason, created_at AS createdAt, updated_at AS updatedAt
         FROM outbox WHERE ${FILTER} ORDER BY id LIMIT @limit`,
      )
      .all({ sink: filter.sink ?? null, key: filter.key ?? null, limit }) as DeadLetter[];
  }

  /** Makes matching dead letters pending again (attempts reset, due now); audited per row. Returns how many. */
  retryDeadLetters(filter: DeadLetterFilter, actor: string): number {
    return this.operate(filter, actor, 'dead-letter-retry', (ids, at) => {
      const stmt = this.db.prepare(
        `UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'dead'`,
      );
      for (const id of ids) stmt.run(at, at, id);
    });
  }

  /** Deletes matching dead letters from the outbox (the stored result stays); audited per row. Returns how many. */
  purgeDeadLetters(filter: DeadLetterFilter, actor: string): number {
    return this.operate(filter, actor, 'dead-letter-purge', (ids) => {
      const stmt = this.db.prepare(`DELETE FROM outbox WHERE id = ? AND state = 'dead'`);
      for (const id of ids) stmt.run(id);
    });
  }

  private operate(filter: DeadLetterFilter, actor: string, action: string, apply: (ids: number[], at: number) => void): number {
    if (!filter.all && filter.sink === undefined && filter.key === undefined) {
      throw new RangeError('a dead-letter operation needs a sink, a key, or all');
    }
    const audit = this.db.prepare(`INSERT INTO audit (at, actor, action, subject, detail) VALUES (?, ?, ?, ?, ?)`);
    const run = this.db.transaction((): number => {
      const at = this.now();
      const rows = this.deadLetters(filter, Number.MAX_SAFE_INTEGER);
      apply(
        rows.map((r) => r.id),
        at,
      );
      for (const r of rows) audit.run(at, actor, action, r.dedupKey, JSON.stringify({ sink: r.sink, reason: r.reason }));
      return rows.length;
    });
    return run.immediate();
  }
}
