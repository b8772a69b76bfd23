// The outbox's counts as the running gateway reads them (health, /metrics, the status page): one count shared by every
// reader for a couple of seconds, and made anew as soon as a commit or an outcome has changed it. A count's cost
// follows the rows not yet sent: nothing on a gateway that keeps up, a hundred milliseconds and more for a night's
// backlog, and the event loop that counts is the one the analyzers' ACKs wait for. So a count that took longer than
// SLOW_COUNT_MS is made off the loop from then on (count-worker.ts), at most once per COUNTS_TTL_MS, while readers
// get the last one; once a count is quick again, counting goes back on the loop.
import type { SinkCounts } from './outbox-operator.js';

/** How long a count is shared: while nothing changes, and while counting is slow even when something does. */
export const COUNTS_TTL_MS = 2_000;

/** A count on the event loop that took longer than this (ms) is made off the loop from then on. */
export const SLOW_COUNT_MS = 20;

interface Count {
  /** When it was asked for (monotonic ms). */
  at: number;
  counts: SinkCounts[];
  /** The changes made before it was asked for: any since, and it is no longer current. */
  changes: number;
}

/** The counts every reader of a running gateway shares. */
export class OutboxCounts {
  private last: Count | undefined;
  private changes = 0;
  private slow = false;
  private counting = false;

  constructor(
    /** A count on the event loop (outbox.counts()). */
    private readonly read: () => SinkCounts[],
    /** A count off it (a CountWorker's), or none: then every count is made on the loop. */
    private readonly readLater: (() => Promise<SinkCounts[]>) | undefined,
    /** Monotonic ms: how old a count is and how long one took. */
    private readonly monotonic: () => number,
  ) {}

  /** A commit or an outcome changed the outbox: the next reader gets a new count (when counting is slow, the one after). */
  invalidate(): void {
    this.changes++;
  }

  /** Each sink's counts: the shared one, or a new one. */
  current(): SinkCounts[] {
    const now = this.monotonic();
    const last = this.last;
    const age = last ? now - last.at : Infinity;
    if (last && last.changes === this.changes && age <= COUNTS_TTL_MS) return last.counts;
    if (last && this.slow && this.readLater) {
      if (age > COUNTS_TTL_MS) this.countLater(now, this.readLater);
      return last.counts;
    }
    const changes = this.changes;
    const counts = this.read();
    this.slow = this.monotonic() - now > SLOW_COUNT_MS;
    this.last = { at: now, counts, changes };
    return counts;
  }

  private countLater(asked: number, readLater: () => Promise<SinkCounts[]>): void {
    if (this.counting) return;
    this.counting = true;
    const changes = this.changes;
    readLater().then(
      (counts) => {
        this.counting = false;
        // Quick again (its wait for the worker to start included): the next count is made on the loop.
        this.slow = this.monotonic() - asked > SLOW_COUNT_MS;
        this.last = { at: asked, counts, changes };
      },
      () => {
        // The worker could not count: back to counting on the loop, which throws why if it cannot either.
        this.counting = false;
        this.slow = false;
      },
    );
  }
}
