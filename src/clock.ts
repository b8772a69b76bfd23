// Injected time (STYLE.md rule 8): every part that reads the time or arms a timer gets a Clock, so tests drive time by
// hand and no module reads Date.now() or the global timers on its own.

/** Time and timers, injected. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock, for the composition root. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
