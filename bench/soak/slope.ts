// The soak's arithmetic: least-squares slopes of samples over time and percentiles, pure.

/** One sample of a figure at `hours` since the run began. */
export interface Point {
  hours: number;
  value: number;
}

/** Least-squares slope (value per hour); 0 when fewer than two distinct times. */
export function leastSquaresSlope(points: readonly Point[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanT = points.reduce((s, p) => s + p.hours, 0) / n;
  const meanV = points.reduce((s, p) => s + p.value, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.hours - meanT) * (p.value - meanV);
    den += (p.hours - meanT) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** The q-quantile (0..1) by nearest rank; NaN for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
