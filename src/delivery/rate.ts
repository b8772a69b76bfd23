// The measured delivery rate over a sliding window, in per-second buckets so memory stays bounded.

/** Results delivered per second over the last `windowMs`. */
export class DeliveryRate {
  private readonly buckets = new Map<number, number>();

  constructor(private readonly windowMs: number) {}

  /** Counts `n` deliveries at `now`. */
  add(now: number, n: number): void {
    if (n <= 0) return;
    const second = Math.floor(now / 1000);
    this.buckets.set(second, (this.buckets.get(second) ?? 0) + n);
    this.prune(now);
  }

  /** Deliveries per second over the window ending at `now`. */
  perSecond(now: number): number {
    this.prune(now);
    let total = 0;
    for (const n of this.buckets.values()) total += n;
    return total / (this.windowMs / 1000);
  }

  /** Seconds held: at most the window's and one, however long nobody asks for the rate. */
  get secondsHeld(): number {
    return this.buckets.size;
  }

  private prune(now: number): void {
    const oldest = Math.floor((now - this.windowMs) / 1000);
    for (const second of this.buckets.keys()) if (second <= oldest) this.buckets.delete(second);
  }
}
