// What an operator sees and does with the outbox: counts per sink, dead letters listed, retried, purged.
// Every operator change is audited with the operator as actor (ARCHITECTURE.md: nothing is silently dropped).
import type Database from 'better-sqlite3';
import { AuditLog } from './layout.js';

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

/** The count queries (exported so a test can EXPLAIN them): none scans the outbox table. */
export const COUNT_SQL = {
  // Covering scans of the partial indexes; GROUP BY sink follows their leading column, so no sort.
  pending: `SELECT sink, COUNT(*) AS n, MIN(id) AS first FROM outbox WHERE state = 'pending' GROUP BY sink`,
  dead: `SELECT sink, COUNT(*) AS n FROM outbox WHERE state = 'dead' GROUP BY sink`,
  conflict: `SELECT sink, COUNT(*) AS n FROM outbox WHERE state = 'conflict' GROUP BY sink`,
  // Kept by triggers (migration 2): sent rows are most of the table. The last day's deliveries are still in their
  // minutes (migration 11): at most 1,500 small rows per sink, read on outbox_sent_minutes' primary key.
  sent: `SELECT outbox_sent.sink, outbox_sent.n + coalesce(sum(outbox_sent_minutes.n), 0) AS n
    FROM outbox_sent LEFT JOIN outbox_sent_minutes ON outbox_sent_minutes.sink = outbox_sent.sink GROUP BY outbox_sent.sink`,
  createdAt: `SELECT created_at FROM outbox WHERE id = ?`,
  // The rate behind the page's ETA and `labgate status`: per-minute tallies written once per batch (outbox.ts).
  sentSince: `SELECT coalesce(SUM(n), 0) FROM outbox_sent_minutes WHERE sink = ? AND minute >= ?`,
  pendingOf: `SELECT COUNT(*) FROM outbox WHERE sink = ? AND state = 'pending'`,
} as const;

/** What the count queries answer in one read transaction (here, or in count-worker.ts's thread). */
export interface CountRows {
  /** Per sink with pending rows: how many, and the created_at of the smallest pending id (ids follow arrival). */
  pending: { sink: string; n: number; oldestAt: number | null }[];
  sent: { sink: string; n: number }[];
  dead: { sink: string; n: number }[];
  conflict: { sink: string; n: number }[];
}

/** Each sink's counts from the rows of the count queries, sorted by sink. */
export function countsOf(rows: CountRows): SinkCounts[] {
  const bySink = new Map<string, SinkCounts>();
  const of = (sink: string): SinkCounts => {
    let c = bySink.get(sink);
    if (!c) bySink.set(sink, (c = { sink, pending: 0, sent: 0, dead: 0, conflict: 0, oldestPendingAt: null }));
    return c;
  };
  for (const r of rows.pending) Object.assign(of(r.sink), { pending: r.n, oldestPendingAt: r.oldestAt });
  for (const state of ['sent', 'dead', 'conflict'] as const) for (const r of rows[state]) of(r.sink)[state] = r.n;
  return [...bySink.values()].sort((a, b) => (a.sink < b.sink ? -1 : a.sink > b.sink ? 1 : 0));
}

/** The operator's view of the outbox; the Outbox class extends it with the delivery side. */
export class OutboxOperator {
  private readonly countBy: Record<'pending' | 'dead' | 'conflict' | 'sent', Database.Statement>;
  private readonly createdAt: Database.Statement;
  private readonly sentSinceOf: Database.Statement;
  private readonly pendingOf: Database.Statement;

  constructor(
    protected readonly db: Database.Database,
    protected readonly now: () => number,
    /** Steady time (steady-time.ts): what due times are written in. */
    protected readonly dueNow: () => number = now,
  ) {
    this.countBy = {
      pending: db.prepare(COUNT_SQL.pending),
      dead: db.prepare(COUNT_SQL.dead),
      conflict: db.prepare(COUNT_SQL.conflict),
      sent: db.prepare(COUNT_SQL.sent),
    };
    this.createdAt = db.prepare(COUNT_SQL.createdAt).pluck();
    this.sentSinceOf = db.prepare(COUNT_SQL.sentSince).pluck();
    this.pendingOf = db.prepare(COUNT_SQL.pendingOf).pluck();
  }

  /**
   * Pending, sent, dead and conflict counts and the oldest pending row, per sink. Cost follows the rows not yet sent,
   * never the table. A running gateway's readers (/healthz, /metrics, the status page) share one count, made off
   * the event loop while the backlog is large (outbox-counts.ts).
   */
  counts(): SinkCounts[] {
    const read = this.db.transaction((): CountRows => ({
      pending: (this.countBy.pending.all() as { sink: string; n: number; first: number }[]).map((r) => ({
        sink: r.sink,
        n: r.n,
        oldestAt: (this.createdAt.get(r.first) as number | undefined) ?? null,
      })),
      sent: this.countBy.sent.all() as { sink: string; n: number }[],
      dead: this.countBy.dead.all() as { sink: string; n: number }[],
      conflict: this.countBy.conflict.all() as { sink: string; n: number }[],
    }));
    // One read transaction: the four counts are of one instant.
    return countsOf(read.deferred());
  }

  /** Pending rows of one sink, counted on the partial index (cheap enough for /metrics). */
  pendingCount(sink: string): number {
    return this.pendingOf.get(sink) as number;
  }

  /** Rows of `sink` marked sent at or after `since` (epoch ms): the measured delivery rate. */
  sentSince(sink: string, since: number): number {
    return this.sentSinceOf.get(sink, Math.floor(since / 60_000)) as number;
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
      const stmt = this.db.prepare(`UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'dead'`);
      const due = this.dueNow();
      for (const id of ids) stmt.run(due, at, id);
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
    const audit = new AuditLog(this.db);
    const run = this.db.transaction((): number => {
      const at = this.now();
      const rows = this.deadLetters(filter, Number.MAX_SAFE_INTEGER);
      apply(
        rows.map((r) => r.id),
        at,
      );
      for (const r of rows) audit.write(at, actor, action, r.dedupKey, JSON.stringify({ sink: r.sink, reason: r.reason }));
      return rows.length;
    });
    return run.immediate();
  }
}
