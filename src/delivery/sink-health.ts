// Each sink as health, the status page and /metrics see it: the drain's circuit beside the outbox backlog, counted
// once for every reader (store/outbox-counts.ts: a large backlog is counted off the event loop).
import type { Clock } from '../clock.js';
import type { SinkCounts } from '../store/outbox-operator.js';
import type { DrainStatus } from './drain.js';

/** A sink's backlog, and its circuit when the delivery engine knows it. */
export interface SinkHealth {
  sink: string;
  pending: number;
  /** Age in seconds of the oldest pending row; 0 when none. */
  oldestAgeSeconds: number;
  dead: number;
  conflicts?: number;
  circuit?: 'closed' | 'open' | 'half-open';
  /** Why the circuit is open (last failure), for the technician. */
  reason?: string;
}

/** The sinks' health from their drains' status and the outbox counts. */
export class SinkHealthView {
  constructor(
    private readonly drains: () => readonly { status(): DrainStatus }[],
    private readonly counts: () => SinkCounts[],
    /** The wall clock for the oldest row's age. */
    private readonly clock: Pick<Clock, 'now'>,
    /** The age of a wall-clock stamp (the store's, which discounts the clock's steps forward). */
    private readonly ageMs: (at: number, now: number) => number = (at, now) => now - at,
  ) {}

  /** One entry per drain, in the drains' order. */
  health(): SinkHealth[] {
    const now = this.clock.now();
    const counts = this.counts();
    return this.drains().map((drain) => {
      const status = drain.status();
      const c = counts.find((x) => x.sink === status.sink);
      const oldest = c?.oldestPendingAt ?? null;
      return {
        sink: status.sink,
        pending: c?.pending ?? 0,
        oldestAgeSeconds: oldest === null ? 0 : Math.max(0, Math.round(this.ageMs(oldest, now) / 1000)),
        dead: c?.dead ?? 0,
        conflicts: c?.conflict ?? 0,
        circuit: status.circuit,
        ...(status.lastError && status.circuit !== 'closed' ? { reason: status.lastError } : {}),
      };
    });
  }
}
