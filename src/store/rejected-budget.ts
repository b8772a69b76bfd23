// The rejected captures' size bound (prune-rejected.ts), kept as they arrive rather than at the next hourly run: a
// broken analyzer sending message after message fills the bound in seconds and the card behind it in minutes. The raw
// bytes of the rejected captures are summed once (one pass over the rejected-capture index) and then added to as
// rejected messages are journaled, so the commit path only adds a number. Past the bound, the oldest go, in batches
// between which the event loop runs, until the newest nine tenths of it are left: one run serves a tenth of the bound's
// new bytes, not one run per message. What may not go (a capture a stored result or a conflict names) is summed again
// after each run, so the next run waits for new bytes instead of repeating a run that can prune nothing.
import type Database from 'better-sqlite3';
import { AuditLog } from './layout.js';
import { capturesKept } from './prune.js';
import { rejectedStep } from './prune-rejected.js';

/** The share of the bound a run keeps: the newest 90%. */
export const KEPT_SHARE = 0.9;

/** Raw bytes a run keeps of a bound of `maxBytes`. */
export function keptBytes(maxBytes: number): number {
  return Math.floor(maxBytes * KEPT_SHARE);
}

/** Pure: the total of rejected bytes past which the next run starts, given the total a run left. */
export function nextRunAbove(maxBytes: number, leftBytes: number): number {
  return Math.max(maxBytes, leftBytes + maxBytes - keptBytes(maxBytes));
}

/** What a run needs besides the database. */
export interface RejectedBudgetOptions {
  maxBytes: number;
  now: () => number;
  /** Checked between batches: a stop lands there. */
  stopped?: () => boolean;
  batchSize?: number;
  /** After each run: the captures it removed (the status page's count) or the error that ended it. */
  onRun?: (outcome: { removed: number; keptBytes: number } | { error: unknown }) => void;
}

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Keeps the rejected captures within their bound as they are journaled. */
export class RejectedBudget {
  private total: number | undefined;
  private runAbove: number;
  private running: Promise<void> | null = null;
  private readonly sum: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly options: RejectedBudgetOptions,
  ) {
    this.runAbove = options.maxBytes;
    this.sum = db.prepare(`SELECT COALESCE(SUM(length(raw)), 0) FROM captures INDEXED BY captures_rejected WHERE status = 'rejected'`).pluck();
  }

  /** Counts a rejected capture just committed; past the bound, starts a run unless one is running. */
  journaled(rawBytes: number): void {
    // The first sum already holds the capture just committed.
    this.total = this.total === undefined ? (this.sum.get() as number) : this.total + rawBytes;
    if (this.total > this.runAbove && this.running === null) this.running = this.run().finally(() => (this.running = null));
  }

  /** The raw bytes of rejected captures as counted so far (undefined before the first). */
  counted(): number | undefined {
    return this.total;
  }

  /** Resolves once no run is in progress. */
  async settled(): Promise<void> {
    await this.running;
  }

  private async run(): Promise<void> {
    const { db, options } = this;
    const keep = keptBytes(options.maxBytes);
    let removed = 0;
    try {
      const step = rejectedStep(db, keep, capturesKept(db));
      const batch = db.transaction(() => step(options.batchSize ?? 500));
      for (;;) {
        if (options.stopped?.()) break;
        const done = batch.immediate();
        removed += done.removed;
        if (done.done) break;
        await nextTick();
      }
      new AuditLog(db).write(options.now(), 'gateway', 'retention-pruned', null, JSON.stringify({ rejected: removed, rejectedBytesKept: keep }));
      this.total = this.sum.get() as number;
      this.runAbove = nextRunAbove(options.maxBytes, this.total);
      options.onRun?.({ removed, keptBytes: keep });
    } catch (error) {
      // A full disk or a busy database: the next run waits for another tenth of the bound instead of every message.
      this.runAbove = (this.total ?? 0) + options.maxBytes - keep;
      options.onRun?.({ error });
    }
  }
}
