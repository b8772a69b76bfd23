// Orders that reached an analyzer, kept so each is sent once and each dispatch reaches the LIMS once.
// Durability rules: a row is written only after the analyzer ACKed the message carrying the order, in one FULL
// transaction (record()); a crash before it may resend that one message, never more, and the LIMS's dispatch is
// idempotent by its URL. The rows are drained like outbox rows (the same Drain, backoff and breaker) through the
// DrainOutbox face below; a claim writes nothing, and outcomes are marked without waiting for fsync (a lost mark only
// means a repeated PUT the LIMS absorbs).
import type Database from 'better-sqlite3';
import { sha256Hex } from '../payload.js';
import type { OutboxRow, Outcome } from '../delivery/contract.js';
import { DISPATCH_SINK, type DispatchPayload } from '../delivery/dispatch-contract.js';

/** Dispatch rows by state, for the status page and /healthz. */
export interface DispatchCounts {
  pending: number;
  oldestPendingAt: number | null;
  sent: number;
  dead: number;
}

type Raw = [number, string, string, number, number];

/** The dispatches table on the store's connection. */
export class DispatchQueue {
  private readonly flying = new Set<number>();
  private readonly insert: Database.Statement;
  private readonly known: Database.Statement;
  private readonly due: Database.Statement;
  private readonly dueAt: Database.Statement;
  private readonly countStates: Database.Statement;
  private readonly mark: (rows: readonly OutboxRow[], outcomes: readonly Outcome[], retryAt: readonly (number | null)[]) => void;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    /** Steady time (store/steady-time.ts): what due times are written in. */
    private readonly dueNow: () => number = now,
  ) {
    this.insert = db.prepare(`INSERT INTO dispatches (order_id, instrument_id, accession, dispatched_at, state, next_attempt_at, updated_at)
      VALUES (?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (order_id, instrument_id) DO NOTHING`);
    this.known = db.prepare(`SELECT value FROM json_each(?) WHERE EXISTS (SELECT 1 FROM dispatches WHERE order_id = value AND instrument_id = ?)`).pluck();
    const due = `FROM dispatches WHERE state = 'pending' AND next_attempt_at <= ? AND id NOT IN (SELECT value FROM json_each(?))
      ORDER BY next_attempt_at, id LIMIT ?`;
    this.due = db.prepare(`SELECT id, order_id, instrument_id, dispatched_at, attempts ${due}`).raw();
    this.dueAt = db.prepare(`SELECT next_attempt_at ${due}`).pluck();
    this.countStates = db.prepare(
      `SELECT state, count(*) AS n, min(CASE WHEN state = 'pending' THEN dispatched_at END) AS oldest FROM dispatches GROUP BY state`,
    );
    const s = {
      sent: db.prepare(`UPDATE dispatches SET state = 'sent', last_error = NULL, updated_at = ? WHERE id = ? AND state = 'pending'`),
      retry: db.prepare(`UPDATE dispatches SET attempts = attempts + ?, next_attempt_at = coalesce(?, next_attempt_at), last_error = ?, updated_at = ?
        WHERE id = ? AND state = 'pending'`),
      dead: db.prepare(`UPDATE dispatches SET state = 'dead', attempts = attempts + 1, last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'`),
    };
    this.mark = db.transaction((rows: readonly OutboxRow[], outcomes: readonly Outcome[], retryAt: readonly (number | null)[]) => {
      const at = this.now();
      rows.forEach((row, i) => {
        const o = outcomes[i]!;
        if (o.kind === 'delivered') s.sent.run(at, row.id);
        else if (o.kind === 'retry') s.retry.run(retryAt[i] === null ? 0 : 1, retryAt[i] ?? null, o.reason, at, row.id);
        // A dispatch has no clinical content to be in conflict about: the LIMS refused it, which a person must see.
        else s.dead.run(o.reason, at, row.id);
      });
    });
  }

  /** Records, in the caller's transaction, that the analyzer has these orders; returns how many were new. */
  record(instrumentId: string, orders: readonly { orderId: string; accession: string }[], at: number): number {
    let added = 0;
    const due = this.dueNow();
    for (const o of orders) added += this.insert.run(o.orderId, instrumentId, o.accession, at, due, at).changes;
    return added;
  }

  /** Those of `orderIds` the instrument has already been sent. */
  sentOf(instrumentId: string, orderIds: readonly string[]): Set<string> {
    return new Set(this.known.all(JSON.stringify(orderIds), instrumentId) as string[]);
  }

  /** Up to `limit` due rows not in flight, as outbox rows for the dispatch sink. */
  claimDue(_sink: string, limit: number): OutboxRow[] {
    const raw = this.due.all(this.dueNow(), JSON.stringify([...this.flying]), limit) as Raw[];
    return raw.map(([id, orderId, instrumentId, dispatchedAt, attempts]) => {
      this.flying.add(id);
      const payload = JSON.stringify({ orderId, instrumentId, dispatchedAt: new Date(dispatchedAt).toISOString() } satisfies DispatchPayload);
      return {
        id,
        sink: DISPATCH_SINK,
        dedupKey: `${orderId}|${instrumentId}`,
        recordId: orderId,
        attempts,
        etag: null,
        payload,
        payloadSha256: sha256Hex(payload),
      };
    });
  }

  /** One outcome per row in ONE transaction, without waiting for fsync (see the top of this file). */
  recordOutcomes(_sink: string, rows: readonly OutboxRow[], outcomes: readonly Outcome[], retryAt: readonly (number | null)[]): void {
    if (outcomes.length !== rows.length) throw new Error(`recordOutcomes: ${rows.length} rows but ${outcomes.length} outcomes`);
    const level = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      this.mark(rows, outcomes, retryAt);
    } finally {
      this.db.pragma(`synchronous = ${level}`);
      this.release(_sink, rows);
    }
  }

  /** Returns claimed rows to the due set. */
  release(_sink: string, rows: readonly OutboxRow[]): void {
    for (const row of rows) this.flying.delete(row.id);
  }

  /** Forgets every in-flight claim (at start: rows claimed by a process that died are due again). */
  resetInFlight(): void {
    this.flying.clear();
  }

  /** Earliest due time of a pending row not in flight, or null. */
  nextDueAt(_sink: string): number | null {
    return (this.dueAt.get(Number.MAX_SAFE_INTEGER, JSON.stringify([...this.flying]), 1) as number | undefined) ?? null;
  }

  counts(): DispatchCounts {
    const out: DispatchCounts = { pending: 0, oldestPendingAt: null, sent: 0, dead: 0 };
    for (const r of this.countStates.all() as { state: 'pending' | 'sent' | 'dead'; n: number; oldest: number | null }[]) {
      out[r.state] = r.n;
      if (r.state === 'pending') out.oldestPendingAt = r.oldest;
    }
    return out;
  }
}
