// Wrong tokens per client address: ten a minute from one address is enough for typos and far too few to guess a
// 16+ character token, while a colleague at another bench (another address) is never locked out by someone else's
// guessing. The table is bounded: beyond `maxAddresses`, the address whose last failure is oldest is forgotten.

/** Failed logins allowed per address within the window. */
export const LOGIN_FAILURES_PER_MINUTE = 10;
const WINDOW_MS = 60_000;

/** Counts failed logins per client address. */
export class LoginLimiter {
  /** Address → times of its failures in the window, oldest first; Map order is least recently failed first. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit = LOGIN_FAILURES_PER_MINUTE,
    private readonly maxAddresses = 10_000,
  ) {}

  /** True when this address has used up its failures for now. */
  throttled(address: string, now: number): boolean {
    return this.recent(address, now).length >= this.limit;
  }

  /** Records one wrong token from this address. */
  failed(address: string, now: number): void {
    const times = [...this.recent(address, now), now];
    this.failures.delete(address);
    this.failures.set(address, times);
    if (this.failures.size > this.maxAddresses) this.failures.delete(this.failures.keys().next().value!);
  }

  private recent(address: string, now: number): number[] {
    const times = (this.failures.get(address) ?? []).filter((at) => now - at < WINDOW_MS);
    if (times.length === 0) this.failures.delete(address);
    return times;
  }
}
