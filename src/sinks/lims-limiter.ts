// A sink-wide bound on requests in flight, paced by what the LIMS answers. The delivery engine may overlap batches
// (to hide each batch's tail), and the bound must hold across them, matching the keep-alive connections of the pool.
// RFC 6585 4: a 429 says this client sends too fast. One now and then (a load balancer shedding a request) only makes
// its record wait for Retry-After. When they come often (more than one answer in ten over a window of at least
// PACE_WINDOW answers) the LIMS is asking us to slow down: the bound drops by a quarter, and grows back by one for each
// window without a 429 (additive increase, multiplicative decrease, as TCP's congestion control), never above `max`.

/** Answers judged together, at least; a window is also never shorter than the bound itself (one round of requests). */
export const PACE_WINDOW = 20;

/** The bound and the answers counted in the current window. */
export interface Pace {
  limit: number;
  answers: number;
  throttled: number;
}

/** The pace after one more answer of the LIMS (`throttled`: it was a 429). Pure. */
export function stepPace(pace: Pace, throttled: boolean, max: number): Pace {
  const answers = pace.answers + 1;
  const count = pace.throttled + (throttled ? 1 : 0);
  if (answers < Math.max(pace.limit, PACE_WINDOW)) return { limit: pace.limit, answers, throttled: count };
  let limit = pace.limit;
  if (count * 10 > answers) limit = Math.max(1, Math.floor((pace.limit * 3) / 4));
  else if (count === 0) limit = Math.min(max, pace.limit + 1);
  return { limit, answers: 0, throttled: 0 };
}

/** Runs tasks with at most `limit()` at once, first come first served. */
export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Feeds one answer of the LIMS to the pacing: whether it was a 429. */
  heard(throttled: boolean): void;
  /** Requests allowed in flight now. */
  limit(): number;
}

/** Creates a limiter of at most `max` (at least 1) slots. */
export function createLimiter(max: number): Limiter {
  const ceiling = Math.max(1, Math.floor(max));
  let pace: Pace = { limit: ceiling, answers: 0, throttled: 0 };
  let active = 0;
  const waiting: (() => void)[] = [];
  // A freed slot goes to the longest waiter; a slot counts as taken from the moment it is handed over.
  const admit = (): void => {
    while (active < pace.limit && waiting.length > 0) {
      active++;
      waiting.shift()!();
    }
  };
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active < pace.limit && waiting.length === 0) active++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        active--;
        admit();
      }
    },
    heard(throttled: boolean): void {
      pace = stepPace(pace, throttled, ceiling);
      admit();
    },
    limit: () => pace.limit,
  };
}
