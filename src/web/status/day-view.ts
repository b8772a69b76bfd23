// The day at a glance, from the store's counters: results per hour per instrument, deliveries per hour and the backlog
// per sink, over the 24 hours up to now. Pure: the composition root reads the rows, this arranges them for the charts.
import type { BacklogSample, HourFigures, SinkHour } from '../../store/store.js';
import type { DayView } from './source.js';

const HOUR_MS = 3_600_000;
export const HOURS = 24;

/** What the store holds for the window and what is pending right now. */
export interface DayRows {
  now: number;
  instruments: readonly string[];
  hours: readonly HourFigures[];
  sinks: readonly { sink: string; pending: number }[];
  delivered: readonly SinkHour[];
  /** Samples from an hour before the window on, so the backlog's level at its start is known. */
  backlog: readonly BacklogSample[];
  /** The clock label of an hour (`14`); default the gateway's local time. */
  hourLabel?: (startMs: number) => string;
}

/** The first epoch hour of the window ending in the hour holding `now`. */
export function windowStart(now: number): number {
  return Math.floor(now / HOUR_MS) - (HOURS - 1);
}

/** Arranges the rows into 24 hourly buckets per instrument and sink, and each sink's backlog as a step line. */
export function dayView(r: DayRows): DayView {
  const first = windowStart(r.now);
  const hours = Array.from({ length: HOURS }, (_, i) => first + i);
  const label = r.hourLabel ?? ((ms: number) => String(new Date(ms).getHours()).padStart(2, '0'));
  const slot = (hour: number): number => hour - first;
  const instruments = r.instruments.map((id) => {
    const results = new Array<number>(HOURS).fill(0);
    const rejected = new Array<number>(HOURS).fill(0);
    for (const h of r.hours) {
      if (h.instrumentId !== id || slot(h.hour) < 0 || slot(h.hour) >= HOURS) continue;
      results[slot(h.hour)] = h.results;
      rejected[slot(h.hour)] = h.rejected;
    }
    return { id, results, rejected };
  });
  const from = first * HOUR_MS;
  const sinks = r.sinks.map(({ sink, pending }) => {
    const delivered = new Array<number>(HOURS).fill(0);
    for (const d of r.delivered) if (d.sink === sink && slot(d.hour) >= 0 && slot(d.hour) < HOURS) delivered[slot(d.hour)] = d.delivered;
    return {
      sink,
      delivered,
      backlog: steps(
        r.backlog.filter((b) => b.sink === sink),
        from,
        r.now,
        pending,
      ),
    };
  });
  return { from, to: r.now, labels: hours.map((h) => label(h * HOUR_MS)), instruments, sinks };
}

// The backlog as points of a step line from the window's start to now: the last sample before the start gives the
// level there (none: unknown until the first sample), each later sample a step, the pending count now the end.
function steps(samples: readonly BacklogSample[], from: number, now: number, pendingNow: number): { at: number; pending: number }[] {
  const before = samples.filter((s) => s.at < from).at(-1);
  const inside = samples.filter((s) => s.at >= from && s.at <= now).map((s) => ({ at: s.at, pending: s.pending }));
  return [...(before ? [{ at: from, pending: before.pending }] : []), ...inside, { at: now, pending: pendingNow }];
}
