// One benchmark figure, printed as one JSON line beside its ceiling or peer measured in the same run.

/** A figure: `value` in `unit`, with whatever context makes it comparable (ceiling, peer, ratio, target). */
export interface BenchLine {
  bench: string;
  value: number;
  unit: string;
  [context: string]: unknown;
}

/** Whether a figure was asked for (`npm run bench <figure>`); a module skips the work of figures nobody asked for. */
export type Wants = (figure: string) => boolean;

/** A benchmark module: `bench/<name>.bench.ts` exporting `run`, and the figures it emits (to select one by name). */
export type BenchModule = { figures?: readonly string[]; run: (emit: (line: BenchLine) => void, wants: Wants) => Promise<void> };

/** Rounds to 3 significant digits for readable lines. */
export function sig(n: number, digits = 3): number {
  return Number.isFinite(n) && n !== 0 ? Number(n.toPrecision(digits)) : n;
}
