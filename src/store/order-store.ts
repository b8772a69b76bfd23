// The two-way side of the store: what reached an analyzer (dispatches.ts) and the day figures of queries and
// downloads (order-days.ts). Results never pass through here, and nothing here touches a result's rows.
import type Database from 'better-sqlite3';
import { DISPATCH_SINK } from '../delivery/dispatch-contract.js';
import { DispatchDeadLetters } from './dispatch-dead-letters.js';
import { DispatchQueue } from './dispatches.js';
import { OrderDays, type OrderFigure, type OrderFigures } from './order-days.js';

export type { OrderFigure, OrderFigures };

/** Orders and their figures on the store's one connection. */
export class OrderStore {
  /** The dispatch rows, drained to the LIMS like an outbox (a DrainOutbox). */
  readonly dispatches: DispatchQueue;
  /** Dispatches the LIMS refused for good: listed, retried and purged by an operator. */
  readonly deadLetters: DispatchDeadLetters;
  private readonly days: OrderDays;
  private readonly sentTx: Database.Transaction<
    (instrumentId: string, orders: readonly { orderId: string; accession: string }[], at: number, download: boolean) => number
  >;

  /** `due` is steady time (steady-time.ts), what dispatches' due times are written in. */
  constructor(db: Database.Database, now: () => number, dayOf?: (at: number) => string, due: () => number = now) {
    this.dispatches = new DispatchQueue(db, now, due);
    this.deadLetters = new DispatchDeadLetters(db, now, due);
    this.days = new OrderDays(db, dayOf);
    this.sentTx = db.transaction((instrumentId, orders, at, download) => {
      const added = this.dispatches.record(instrumentId, orders, at);
      if (download) this.days.count(instrumentId, at, 'downloads');
      return added;
    });
  }

  /**
   * The analyzer ACKed a message carrying these orders at `at`: recorded in ONE durable transaction, so they are never
   * sent again and each dispatch is told to the LIMS. Returns how many were not recorded before. Throws when SQLite
   * cannot commit (the message may then be sent once more).
   */
  recordSent(instrumentId: string, orders: readonly { orderId: string; accession: string }[], at: number, purpose: 'query' | 'download'): number {
    return this.sentTx.immediate(instrumentId, orders, at, purpose === 'download');
  }

  /** Those of `orderIds` already sent to the instrument. */
  sentOf(instrumentId: string, orderIds: readonly string[]): Set<string> {
    return this.dispatches.sentOf(instrumentId, orderIds);
  }

  /** Counts a query or an answer on the day of `at` (never waits for fsync). */
  count(instrumentId: string, at: number, figure: OrderFigure | string): void {
    this.days.countNow(instrumentId, at, figure);
  }

  /** The dispatch rows as one sink's counts (the status page lists them beside the outbox's sinks). */
  dispatchCounts(): { sink: string; pending: number; sent: number; dead: number; conflict: number; oldestPendingAt: number | null } {
    const c = this.dispatches.counts();
    return { sink: DISPATCH_SINK, pending: c.pending, sent: c.sent, dead: c.dead, conflict: 0, oldestPendingAt: c.oldestPendingAt };
  }

  /** Every two-way instrument's figures for the local `day`. */
  figures(day: string): OrderFigures[] {
    return this.days.figures(day);
  }
}
