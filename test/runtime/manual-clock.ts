// A Clock the test drives: timers fire only when `advance` passes their due time.
import type { Clock } from '../../src/driver.js';

export class ManualClock implements Clock {
  private t: number;
  private timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward, firing due timers in order and letting promises settle between them. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    for (;;) {
      const due = [...this.timers.entries()].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].callback();
      await settle();
    }
    this.t = end;
    await settle();
  }

  get pending(): number {
    return this.timers.size;
  }
}

/** Lets queued promise continuations run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
