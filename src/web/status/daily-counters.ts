// The supervisors count since start; the page shows "today". At the first snapshot of a new day the current
// counters become that day's baseline. A restart starts from zero again (counted since start, which is today).
import type { PortStatus } from '../../transport/supervisor.js';

type Counters = PortStatus['counters'];

/** Local midnight of the day holding `now` (the gateway's time zone, as the technician reads "today"). */
export function localMidnight(now: number): number {
  return new Date(now).setHours(0, 0, 0, 0);
}

/** Turns since-start counters into today's. */
export class DailyCounters {
  private readonly baselines = new Map<string, { day: number; counters: Counters }>();

  constructor(private readonly startOfDay: (now: number) => number = localMidnight) {}

  /** Today's counters of one instrument at `now`. */
  today(status: PortStatus, now: number): Counters {
    const day = this.startOfDay(now);
    let baseline = this.baselines.get(status.instrument);
    if (baseline === undefined) {
      // First sight: everything counted so far happened since this process started, which we take as today.
      baseline = { day, counters: { messages: 0, inserted: 0, rejected: 0, naks: 0, checksumErrors: 0, discarded: 0 } };
      this.baselines.set(status.instrument, baseline);
    } else if (baseline.day !== day) {
      baseline = { day, counters: { ...status.counters } };
      this.baselines.set(status.instrument, baseline);
    }
    const b = baseline.counters;
    const c = status.counters;
    return {
      messages: c.messages - b.messages,
      inserted: c.inserted - b.inserted,
      rejected: c.rejected - b.rejected,
      naks: c.naks - b.naks,
      checksumErrors: c.checksumErrors - b.checksumErrors,
      discarded: c.discarded - b.discarded,
    };
  }
}
