// The soak's figures as the bench's JSON lines, each beside its ceiling: slopes fitted after the warm-up.
import { sig, type BenchLine } from '../line.js';
import type { ExactlyOnce } from './exactly-once.js';
import type { Sample } from './sampler.js';
import { leastSquaresSlope, quantile, type Point } from './slope.js';

/** The warm-up left out of the fits: a tenth of the run, and at least five minutes of a long run (a quarter of a short one). */
export function warmupMinutes(minutes: number): number {
  return Math.max(minutes / 10, Math.min(5, minutes / 4));
}

/**
 * The lines; `pass: false` on a line whose ceiling is exceeded. `warmup` (minutes) overrides the default warm-up for a
 * process known to settle longer; the RSS line then also shows the slope from the default warm-up on (`settling`), so
 * what the longer warm-up left out stays in sight.
 */
export function figures(samples: readonly Sample[], minutes: number, once: ExactlyOnce, context: object, warmup = warmupMinutes(minutes)): BenchLine[] {
  const after = samples.filter((s) => s.hours >= warmup / 60);
  const fitOn = (on: readonly Sample[], pick: (s: Sample) => number): number => sig(leastSquaresSlope(on.map((s) => ({ hours: s.hours, value: pick(s) }))));
  const fit = (pick: (s: Sample) => number): number => fitOn(after, pick);
  const range = (pick: (s: Sample) => number) => ({ first: sig(pick(after[0]!)), last: sig(pick(after.at(-1)!)), max: sig(Math.max(...after.map(pick))) });
  const common = { minutes, warmupMinutes: sig(warmup), samples: after.length };
  const rss = fit((s) => s.rssMb);
  const defaultWarmup = warmupMinutes(minutes);
  const settling =
    warmup > defaultWarmup
      ? {
          settling: {
            fromMinute: sig(defaultWarmup),
            slope: fitOn(
              samples.filter((s) => s.hours >= defaultWarmup / 60),
              (s) => s.rssMb,
            ),
          },
        }
      : {};
  // Each half's slope on its own: a leak climbs in both, a process still settling (V8 sizing its heap, code being
  // optimised, caches filling) only in the first.
  const mid = (after[0]!.hours + after.at(-1)!.hours) / 2;
  const halves = (pick: (s: Sample) => number): [number, number] =>
    [after.filter((s) => s.hours < mid), after.filter((s) => s.hours >= mid)].map((h) =>
      sig(leastSquaresSlope(h.map((s) => ({ hours: s.hours, value: pick(s) })))),
    ) as [number, number];
  // A sink down or a cable out closes a descriptor for a while, and a poll or a LIMS request in flight opens one for
  // an instant: fitted on each 5 minutes' median of the steady samples, where a descriptor kept for good still shows.
  const steady = after.filter((s) => s.steady);
  const fds = sig(leastSquaresSlope(windowMedians(steady, 5 / 60)));
  const loop = after.map((s) => s.loopP99Ms).filter(Number.isFinite);
  return [
    {
      bench: 'soak.rss.slope',
      value: rss,
      unit: 'MB/hour',
      ceiling: 1,
      pass: rss <= 1,
      mb: range((s) => s.rssMb),
      halves: halves((s) => s.rssMb),
      anonSlope: fit((s) => s.rssAnonMb),
      fileSlope: fit((s) => s.rssFileMb),
      // Where the anonymous memory grew: malloc's main arena, its other arenas, or the rest (V8's pages above all).
      anonSlopes: { brk: fit((s) => s.anon.brk), arenas: fit((s) => s.anon.arenas), other: fit((s) => s.anon.other) },
      ...settling,
      ...common,
    },
    {
      bench: 'soak.heap.slope',
      value: fit((s) => s.heapMb),
      unit: 'MB/hour',
      mb: range((s) => s.heapMb),
      halves: halves((s) => s.heapMb),
      totalSlope: fit((s) => s.heapTotalMb),
      spaceSlopes: Object.fromEntries(Object.keys(after[0]!.spacesMb).map((space) => [space, fit((s) => s.spacesMb[space] ?? NaN)])),
      ...common,
    },
    {
      bench: 'soak.fds.slope',
      value: fds,
      unit: 'per hour',
      ceiling: 0,
      pass: fds <= 0,
      fds: range((s) => s.fds),
      min: Math.min(...after.map((s) => s.fds)),
      ...common,
      samples: steady.length,
      steadySlope: sig(leastSquaresSlope(steady.map((s) => ({ hours: s.hours, value: s.fds })))),
    },
    { bench: 'soak.wal.max', value: Math.max(...samples.map((s) => s.walBytes)), unit: 'bytes', ...common },
    {
      bench: 'soak.loop.p99',
      value: sig(quantile(loop, 0.99)),
      unit: 'ms',
      median: sig(quantile(loop, 0.5)),
      max: sig(Math.max(...loop)),
      floorMs: sig(
        quantile(
          after.map((s) => s.loopMinMs),
          0.5,
        ),
      ),
      ...common,
    },
    { bench: 'soak.exactly-once', value: once.acked, unit: 'results ACKed', pass: once.ok, ...once, ...context },
  ];
}

/** Each window's median value (at its median time), for a fit that one odd sample cannot tilt. */
export function windowMedians(samples: readonly Sample[], hours: number): Point[] {
  const windows = new Map<number, Sample[]>();
  for (const s of samples) windows.set(Math.floor(s.hours / hours), [...(windows.get(Math.floor(s.hours / hours)) ?? []), s]);
  return [...windows.values()].map((w) => ({
    hours: quantile(
      w.map((s) => s.hours),
      0.5,
    ),
    value: quantile(
      w.map((s) => s.fds),
      0.5,
    ),
  }));
}
