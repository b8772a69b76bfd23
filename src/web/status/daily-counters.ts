// What the page shows per instrument for "today". Messages, results, rejections and the last message come from the
// store's day figures (store/instrument-days.ts), so they survive a restart. NAKs and checksum errors are link
// events the store never sees: they are the supervisor's since-start counters, taken from the first snapshot of a new
// day on (after a restart they count from the start, which is today).
import { localDay, type InstrumentFigures } from '../../store/instrument-days.js';
import type { PortStatus } from '../../transport/supervisor.js';

type Counters = PortStatus['counters'];

/** An instrument's figures for today, as the page shows them. */
export interface TodayFigures {
  messages: number;
  results: number;
  rejected: number;
  naks: number;
  checksumErrors: number;
  lastMessageAt: number | null;
}

/** Turns the store's day figures and the supervisors' since-start link counters into today's. */
export class DailyCounters {
  private readonly baselines = new Map<string, { day: string; counters: Counters }>();

  constructor(private readonly dayOf: (now: number) => string = localDay) {}

  /** The local day holding `now`, as the store keys its figures. */
  day(now: number): string {
    return this.dayOf(now);
  }

  /**
   * Today's figures of one instrument at `now`; `stored` is its line of the store's figures for today (undefined
   * when it sent nothing the store kept), or null when the store keeps no figures (the supervisor's count is shown).
   */
  today(status: PortStatus, now: number, stored: InstrumentFigures | undefined | null): TodayFigures {
    const link = this.sinceStartOfDay(status, now);
    if (stored === null) {
      return {
        messages: link.messages,
        results: link.inserted,
        rejected: link.rejected,
        naks: link.naks,
        checksumErrors: link.checksumErrors,
        lastMessageAt: status.lastMessageAt ?? null,
      };
    }
    return {
      messages: stored?.messages ?? 0,
      results: stored?.results ?? 0,
      rejected: stored?.rejected ?? 0,
      naks: link.naks,
      checksumErrors: link.checksumErrors,
      // The port's time is kept on the monotonic clock (right after a step of the wall clock); the store's is for a
      // gateway that has not received anything since it started.
      lastMessageAt: status.lastMessageAt ?? stored?.lastMessageAt ?? null,
    };
  }

  private sinceStartOfDay(status: PortStatus, now: number): Counters {
    const day = this.dayOf(now);
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
