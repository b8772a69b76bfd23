import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/sinks/lims-limiter.js';

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
});
