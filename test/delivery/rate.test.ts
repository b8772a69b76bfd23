import { describe, expect, it } from 'vitest';
import { DeliveryRate } from '../../src/delivery/rate.js';

describe('the delivery rate window', () => {
  it('averages the deliveries of the last window', () => {
    const rate = new DeliveryRate(60_000);
    let now = 1_000_000;
    for (let s = 0; s < 120; s++, now += 1000) rate.add(now, 3);
    now -= 1000; // read in the second of the last delivery
    expect(rate.perSecond(now)).toBe(3);
    expect(rate.perSecond(now + 30_000)).toBe(1.5);
    expect(rate.perSecond(now + 61_000)).toBe(0);
  });

  it('keeps a window of seconds however long nobody reads it', () => {
    const rate = new DeliveryRate(60_000);
    let now = 0;
    // Two hours of deliveries, a batch every half second, and no scrape.
    for (let i = 0; i < 14_400; i++, now += 500) rate.add(now, 1);
    expect(rate.secondsHeld).toBeLessThanOrEqual(61);
    expect(rate.perSecond(now - 500)).toBe(2);
  });
});
