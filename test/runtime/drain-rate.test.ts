import { describe, expect, it } from 'vitest';
import { DrainRate } from '../../src/drain-rate.js';

describe('the drain rate window', () => {
  it('averages the rows of the last window', () => {
    let now = 1_000_000;
    const rate = new DrainRate(() => now, 60_000);
    for (let s = 0; s < 120; s++, now += 1000) rate.add('postgres', 3);
    now -= 1000; // read in the second of the last batch
    expect(rate.perSecond('postgres')).toBe(3);
    expect(rate.perSecond('lims')).toBe(0);
    now += 30_000;
    expect(rate.perSecond('postgres')).toBe(1.5);
    now += 31_000;
    expect(rate.perSecond('postgres')).toBe(0);
  });

  it('keeps a window of buckets however long nobody reads it', () => {
    let now = 0;
    const rate = new DrainRate(() => now, 60_000);
    // Two hours of deliveries, a batch every half second, and no scrape.
    for (let i = 0; i < 14_400; i++, now += 500) rate.add('postgres', 1);
    now -= 500;
    expect(rate.bucketsHeld('postgres')).toBeLessThanOrEqual(61);
    expect(rate.perSecond('postgres')).toBe(2);
    expect(rate.sinks()).toEqual(['postgres']);
  });
});
