// Linear time as a ratio, robust on a loaded two-core machine: the same total number of bytes is decoded at
// each scale (100 runs of the 1× input, 10 of the 10×, one of the 100×), each timed in CPU time of this process
// and taken at its best of several rounds (load only ever makes a round slower). Linear work takes about as
// long at every scale; work quadratic in the input takes about 100 times longer at 100× than at 1×.
import { expect } from 'vitest';

/** How long the fuzz suites run: `LABGATE_FUZZ=long` (npm run fuzz) for the long run. */
export const long = process.env.LABGATE_FUZZ === 'long';

/** Property runs: `short` in `npm test`, `short × factor` in `npm run fuzz`. */
export function runs(short: number, factor = 100): number {
  return long ? short * factor : short;
}

/** CPU time (user + system, µs) of the best of `rounds` calls of `work`. */
export function bestCpu(work: () => void, rounds: number): number {
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const start = process.cpuUsage();
    work();
    const used = process.cpuUsage(start);
    best = Math.min(best, used.user + used.system);
  }
  return best;
}

export interface Scaling {
  /** The time at 100× over the time at 1×, same total bytes (about 1 when linear, about 100 when quadratic). */
  ratio100: number;
  /** The time at 100× over the time at 10× (about 1 when linear, about 10 when quadratic). */
  ratio10: number;
}

/** Measures how `run`'s time grows with `make(scale)` for scales 1, 10 and 100. */
export function scaling<T>(make: (scale: number) => T, run: (input: T) => void, rounds = 3): Scaling {
  const inputs = [1, 10, 100].map((scale) => ({ scale, input: make(scale) }));
  for (const { input } of inputs) run(input); // warm-up: compiled code at every scale
  const [t1, t10, t100] = inputs.map(({ scale, input }) =>
    bestCpu(() => {
      for (let i = 0; i < 100 / scale; i++) run(input);
    }, rounds),
  ) as [number, number, number];
  return { ratio100: t100 / Math.max(t1, 1), ratio10: t100 / Math.max(t10, 1) };
}

/**
 * Asserts linear time. The bounds are generous (a machine under load, caches that a 100× input no longer fits)
 * and still far below what quadratic work gives (100 and 10).
 */
export function expectLinear<T>(what: string, make: (scale: number) => T, run: (input: T) => void): void {
  const s = scaling(make, run);
  expect(s.ratio100, `${what}: time at 100× over 1× (same total bytes)`).toBeLessThan(12);
  expect(s.ratio10, `${what}: time at 100× over 10× (same total bytes)`).toBeLessThan(4);
}
