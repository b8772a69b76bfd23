import { describe, expect, it } from 'vitest';
import { createLimiter, PACE_WINDOW, stepPace, type Pace } from '../../src/sinks/lims-limiter.js';

describe('LIMS sink limiter', () => {
  it('never runs more than the limit at once, across callers, and runs everything', async () => {
    const limiter = createLimiter(3);
    let active = 0;
    let peak = 0;
    const task = async (i: number): Promise<number> => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 1 + (i % 3)));
      active--;
      return i;
    };
    const a = Promise.all(Array.from({ length: 20 }, (_, i) => limiter.run(() => task(i))));
    const b = Promise.all(Array.from({ length: 20 }, (_, i) => limiter.run(() => task(100 + i))));
    const [ra, rb] = await Promise.all([a, b]);
    expect(peak).toBe(3);
    expect(ra).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(rb![19]).toBe(119);
  });

  it('frees the slot when a task fails', async () => {
    const limiter = createLimiter(1);
    await expect(limiter.run(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await limiter.run(() => Promise.resolve(1))).toBe(1);
  });

  describe('pacing by 429', () => {
    const feed = (pace: Pace, answers: boolean[], max = 16): Pace => answers.reduce((p, t) => stepPace(p, t, max), pace);
    const full: Pace = { limit: 16, answers: 0, throttled: 0 };
    const window = (throttled: number, size = PACE_WINDOW): boolean[] => Array.from({ length: size }, (_, i) => i < throttled);

    it('a 429 now and then only makes its record wait: the bound stays', () => {
      expect(feed(full, window(2)).limit).toBe(16);
      expect(feed(full, Array.from({ length: 50 }, () => window(1)).flat()).limit).toBe(16);
    });

    it('429s in more than one answer in ten shrink the bound by a quarter per window, down to one', () => {
      expect(feed(full, window(3)).limit).toBe(12);
      expect(feed(full, [...window(3), ...window(3)]).limit).toBe(9);
      expect(feed(full, Array.from({ length: 30 }, () => window(20)).flat()).limit).toBe(1);
    });

    it('grows back by one per window without a 429, up to the configured concurrency', () => {
      const low: Pace = { limit: 4, answers: 0, throttled: 0 };
      expect(feed(low, window(0)).limit).toBe(5);
      expect(feed(low, window(1)).limit).toBe(4);
      expect(feed(low, Array.from({ length: 40 }, () => window(0)).flat()).limit).toBe(16);
    });

    it('the limiter runs no more than the paced bound', async () => {
      const limiter = createLimiter(8);
      for (let i = 0; i < 2 * PACE_WINDOW; i++) limiter.heard(true);
      expect(limiter.limit()).toBe(4);
      let active = 0;
      let peak = 0;
      const task = async (): Promise<void> => {
        peak = Math.max(peak, ++active);
        await new Promise((r) => setTimeout(r, 2));
        active--;
      };
      await Promise.all(Array.from({ length: 30 }, () => limiter.run(task)));
      expect(peak).toBe(4);
      for (let i = 0; i < 4 * PACE_WINDOW; i++) limiter.heard(false);
      expect(limiter.limit()).toBe(8);
    });
  });
});
