// Injected time (STYLE.md rule 8): every part that reads the time or arms a timer gets a Clock, so tests drive time by
// hand and no module reads Date.now() or the global timers on its own.
// Two readings, because a Raspberry Pi's wall clock steps (no battery-backed clock: it boots with the time saved at
// the last shutdown and jumps when NTP answers, by hours or months, either way): the wall clock for what is stored
// and shown as an instant, and a monotonic one for durations, deadlines, due times and the times of in-memory events,
// which must survive a step. Timers run on the monotonic clock (as Node's do).

/** Time and timers, injected. */
export interface Clock {
  /** Wall time, epoch ms: it can step either way. */
  now(): number;
  /** Milliseconds that never step (epoch-aligned when they began, then advancing at the pace of real time). */
  monotonic(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock, for the composition root. */
export const systemClock: Clock = {
  now: () => Date.now(),
  // The process's start on the wall clock plus CLOCK_MONOTONIC's time since: never steps.
  monotonic: () => performance.timeOrigin + performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The wall time, as the wall clock reads now, at which something stamped with `clock.monotonic()` happened: after a
 * step of the wall clock, "5 minutes ago" stays 5 minutes ago. Whole milliseconds, as every other wall time is (the two
 * clocks are read a fraction of a millisecond apart, so the same event may read a millisecond later or earlier).
 */
export function wallTimeOf(clock: Pick<Clock, 'now' | 'monotonic'>, monotonicAt: number): number {
  return Math.round(clock.now() - (clock.monotonic() - monotonicAt));
}
