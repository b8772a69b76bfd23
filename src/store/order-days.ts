// Per-instrument figures of each local day for two-way instruments: queries, answers with orders, "no information"
// answers by reason, downloads sent. Written without waiting for fsync (a figure lost to a power cut is a count, not a
// result, and the next FULL commit makes it durable): counting must never delay an answer an analyzer waits for.
import type Database from 'better-sqlite3';
import { KEEP_DAYS, localDay } from './instrument-days.js';

/** What is counted: a query, its answer, a download. */
export type OrderFigure = 'queries' | 'answered-orders' | `no-information:${string}` | 'downloads' | 'answers-failed';

/** One instrument's figures for a day. */
export interface OrderFigures {
  instrumentId: string;
  figures: Record<string, number>;
}

/** The order_days table on the store's connection. */
export class OrderDays {
  private readonly add: Database.Statement;
  private readonly prune: Database.Statement;
  private readonly read: Database.Statement;
  /** The day each instrument was last counted on by this process: a new day prunes that instrument's old ones. */
  private readonly current = new Map<string, string>();

  constructor(
    private readonly db: Database.Database,
    private readonly dayOf: (at: number) => string = localDay,
  ) {
    this.add = db.prepare(`INSERT INTO order_days (instrument_id, day, figure, n) VALUES (?, ?, ?, ?)
      ON CONFLICT (instrument_id, day, figure) DO UPDATE SET n = n + excluded.n`);
    this.prune = db.prepare('DELETE FROM order_days WHERE instrument_id = ? AND day < ?');
    this.read = db.prepare('SELECT instrument_id AS instrumentId, figure, n FROM order_days WHERE day = ? ORDER BY instrument_id, figure');
  }

  /** Adds `n` to a figure of the day holding `at`, inside the caller's transaction. */
  count(instrumentId: string, at: number, figure: OrderFigure | string, n = 1): void {
    if (n > 0) this.add.run(instrumentId, this.dayOf(at), figure, n);
  }

  /** Adds to a figure in a statement of its own that does not wait for fsync; a new day prunes the instrument's old days. */
  countNow(instrumentId: string, at: number, figure: OrderFigure | string): void {
    const level = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      this.count(instrumentId, at, figure);
      const day = this.dayOf(at);
      if (this.current.get(instrumentId) !== day) {
        this.current.set(instrumentId, day);
        this.prune.run(instrumentId, this.dayOf(at - KEEP_DAYS * 86_400_000));
      }
    } finally {
      this.db.pragma(`synchronous = ${level}`);
    }
  }

  /** Every instrument's figures for `day`. */
  figures(day: string): OrderFigures[] {
    const out = new Map<string, OrderFigures>();
    for (const r of this.read.all(day) as { instrumentId: string; figure: string; n: number }[]) {
      const entry = out.get(r.instrumentId) ?? { instrumentId: r.instrumentId, figures: {} };
      entry.figures[r.figure] = r.n;
      out.set(r.instrumentId, entry);
    }
    return [...out.values()];
  }
}
