// Retry timing as data and pure functions: exponential backoff with full jitter, bounded by a cap
// (AWS Architecture Blog, "Exponential Backoff And Jitter": full jitter spreads a thundering herd best).

/** Backoff bounds in milliseconds. */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** `random(0, min(cap, base * 2^attempts))`, with `random()` in [0, 1). */
export function nextDelay(attempts: number, policy: BackoffPolicy, random: () => number): number {
  // 2^60 already exceeds any sane cap; clamping keeps the arithmetic finite for absurd attempt counts.
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(Math.max(attempts, 0), 60));
  return Math.floor(random() * ceiling);
}

/** When a row that failed `attempts` times before may be tried again; a sink's Retry-After (`notBefore`) is honored. */
export function retryAt(now: number, attempts: number, policy: BackoffPolicy, random: () => number, notBefore?: number): number {
  const at = now + nextDelay(attempts, policy, random);
  return notBefore !== undefined && notBefore > at ? notBefore : at;
}
