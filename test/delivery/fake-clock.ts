// An injected Clock whose time moves only when the test says so; it shows which timers are armed.
import type { Clock } from '../../src/driver.js';

/** A manual clock. */
export class FakeClock implements Clock {
  private timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;
  constructor(public time: number) {}

  now(): number {
    return this.time;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** Due times of the armed timers. */
  get armed(): number[] {
    return [...this.timers.values()].map((t) => t.at);
  }
  /** Moves time forward, firing timers due on the way in order. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = Math.max(this.time, due[1].at);
      due[1].callback();
    }
    this.time = end;
  }
}

/** Lets queued microtasks and I/O callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}
