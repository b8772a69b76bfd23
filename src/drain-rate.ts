// Rows delivered per sink over a sliding window (`labgate_sink_drain_rate`), one bucket per second. Old buckets are
// dropped as rows arrive, not only when someone reads the rate: a gateway that nobody scrapes delivers for months, and
// a bucket kept for every second of them would grow by megabytes a day.
export class DrainRate {
  /** Per sink: [epoch second, rows delivered in it], oldest first. */
  private readonly buckets = new Map<string, [number, number][]>();

  /** `now` a monotonic clock, so a step of the wall clock does not empty or stretch the window. */
  constructor(
    private readonly now: () => number,
    private readonly windowMs: number,
  ) {}

  /** Counts `count` rows delivered to `sink` now. */
  add(sink: string, count: number): void {
    const second = Math.floor(this.now() / 1000);
    const buckets = this.inWindow(sink);
    const last = buckets.at(-1);
    if (last && last[0] === second) last[1] += count;
    else buckets.push([second, count]);
    this.buckets.set(sink, buckets);
  }

  /** Rows per second delivered to `sink` over the window ending now. */
  perSecond(sink: string): number {
    const buckets = this.inWindow(sink);
    this.buckets.set(sink, buckets);
    return buckets.reduce((sum, [, n]) => sum + n, 0) / (this.windowMs / 1000);
  }

  /** The sinks that delivered since the gateway started. */
  sinks(): string[] {
    return [...this.buckets.keys()];
  }

  /** How many one-second buckets `sink` holds (at most the window's seconds and one). */
  bucketsHeld(sink: string): number {
    return this.buckets.get(sink)?.length ?? 0;
  }

  private inWindow(sink: string): [number, number][] {
    const buckets = this.buckets.get(sink) ?? [];
    const cutoff = Math.floor((this.now() - this.windowMs) / 1000);
    const first = buckets.findIndex(([second]) => second > cutoff);
    return first === 0 ? buckets : first < 0 ? [] : buckets.slice(first);
  }
}
