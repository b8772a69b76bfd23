// Retry timing as data and pure functions: exponential backoff with full jitter, bounded by a cap
// (AWS Architecture Blog, "Exponential Backoff And Jitter": full jitter spreads a thundering herd best).
import type { Outcome } from './contract.js';

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

/**
 * When each row of a batch may be tried again; null keeps the row's due time and attempts. A row waits its own
 * backoff (and the sink's Retry-After), grown by its attempts only for a failure of its own that the sink gave no time
 * for: a sink-wide failure says nothing about the row, so it waits the first step (the breaker, not the row's bad
 * luck, answers for the sink's health); a failure the sink named a time for (Retry-After on a 429, "still in
 * processing") waits that time, not a guess that grows (a row unlucky enough to meet four 429s among other failures
 * would otherwise wait up to 16 s where the LIMS asked for one). While the sink is `paused`, a row the sink failed
 * keeps its place: the outage is the sink's, and the probe decides when rows go again.
 */
export function retryTimes(
  rows: readonly { attempts: number }[],
  outcomes: readonly Outcome[],
  paused: boolean,
  now: number,
  policy: BackoffPolicy,
  random: () => number,
): (number | null)[] {
  return outcomes.map((o, i) => {
    if (o.kind !== 'retry') return null;
    const sinkWide = o.scope !== undefined && o.scope !== 'record';
    if (paused && sinkWide) return null;
    const guessed = !sinkWide && o.notBefore === undefined;
    return retryAt(now, guessed ? rows[i]!.attempts : 0, policy, random, o.notBefore);
  });
}
