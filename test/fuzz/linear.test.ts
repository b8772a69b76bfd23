// The linear-time check itself: it must fail work quadratic in its input, or it proves nothing.
import { describe, expect, it } from 'vitest';
import { scaling } from './linear.js';

describe('the linear-time check', () => {
  it('passes linear work and fails work quadratic in the input', () => {
    const linear = (b: Buffer): number => b.reduce((sum, x) => sum + x, 0);
    // What the link layer once did: everything so far scanned again for every piece that arrives.
    const quadratic = (b: Buffer): number => {
      let sum = 0;
      for (let end = 50; end <= b.length; end += 50) for (let i = 0; i < end; i++) sum += b[i]!;
      return sum;
    };
    const make = (scale: number): Buffer => Buffer.alloc(1_000 * scale, 1);
    const l = scaling(make, linear);
    expect(l.ratio100).toBeLessThan(12);
    expect(l.ratio10).toBeLessThan(4);
    const q = scaling(make, quadratic);
    expect(q.ratio100).toBeGreaterThan(12);
    expect(q.ratio10).toBeGreaterThan(4);
  });
});
