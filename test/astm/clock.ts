// A manual clock for tests: timers fire only when the test advances time.
import type { Clock } from '../../src/driver.js';

interface Timer {
  at: number;
  callback: () => void;
  id: number;
}

/** Injected Clock whose time moves only on advance(). */
export class ManualClock implements Clock {
  private current: number;
  private timers: Timer[] = [];
  private nextId = 1;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { at: this.current + ms, callback, id: this.nextId++ };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const until = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = due.at;
      due.callback();
    }
    this.current = until;
  }

  get pending(): number {
    return this.timers.length;
  }

  /** Awaits a promise, jumping to the next timer whenever everything else is idle. */
  async run<T>(promise: Promise<T>, limitMs = 3_600_000): Promise<T> {
    let settled = false;
    const done = promise.finally(() => {
      settled = true;
    });
    const start = this.current;
    while (!settled) {
      await new Promise((resolve) => setImmediate(resolve));
      if (settled) break;
      const next = this.timers.map((t) => t.at).sort((a, b) => a - b)[0];
      if (next === undefined || next - start > limitMs) throw new Error('clock.run: nothing left to wait for');
      this.advance(next - this.current);
    }
    return done;
  }
}
