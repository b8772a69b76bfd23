// A sink-wide bound on requests in flight: the delivery engine may overlap batches (to hide each batch's tail),
// and the bound must hold across them, matching the keep-alive connections of the pool.

/** Runs tasks with at most `limit` at once, first come first served. */
export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** Creates a limiter of `limit` (at least 1) slots. */
export function createLimiter(limit: number): Limiter {
  const max = Math.max(1, Math.floor(limit));
  let active = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      // A released slot passes straight to the next waiter, so `active` only counts down when nobody waits.
      if (active < max) active++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
