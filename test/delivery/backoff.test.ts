import { describe, expect, it } from 'vitest';
import { nextDelay, retryAt, retryTimes } from '../../src/delivery/backoff.js';
import type { Outcome } from '../../src/delivery/contract.js';

const policy = { baseMs: 1_000, capMs: 300_000 };

describe('backoff', () => {
  it.each([
    { attempts: 0, random: 0.5, delay: 500 },
    { attempts: 1, random: 0.5, delay: 1_000 },
    { attempts: 4, random: 0.999, delay: 15_984 },
    { attempts: 9, random: 0.5, delay: 150_000 }, // 512 s is above the cap
    { attempts: 5_000, random: 0.5, delay: 150_000 },
    { attempts: 3, random: 0, delay: 0 },
  ])('full jitter below min(cap, base * 2^$attempts)', ({ attempts, random, delay }) => {
    expect(nextDelay(attempts, policy, () => random)).toBe(delay);
  });

  it('never exceeds the cap', () => {
    for (let a = 0; a < 100; a++) expect(nextDelay(a, policy, () => 0.999999)).toBeLessThan(policy.capMs);
  });

  it('honors a later Retry-After and ignores an earlier one', () => {
    expect(retryAt(10_000, 0, policy, () => 0.5, 60_000)).toBe(60_000);
    expect(retryAt(10_000, 0, policy, () => 0.5, 10_100)).toBe(10_500);
    expect(retryAt(10_000, 0, policy, () => 0.5)).toBe(10_500);
  });

  it("grows a row's delay with its attempts only for its own failures; a paused sink's failures keep their place", () => {
    const rows = [{ attempts: 3 }, { attempts: 3 }, { attempts: 3 }, { attempts: 3 }, { attempts: 3 }];
    const outcomes: Outcome[] = [
      { kind: 'delivered' },
      { kind: 'retry', reason: 'sink bug', scope: 'record' },
      { kind: 'retry', reason: 'lost', scope: 'sink' },
      { kind: 'retry', reason: '503', scope: 'sink', notBefore: 12_000 },
      { kind: 'retry', reason: 'refused', scope: 'unreachable' },
    ];
    expect(retryTimes(rows, outcomes, false, 10_000, policy, () => 0.5)).toEqual([null, 14_000, 10_500, 12_000, 10_500]);
    expect(retryTimes(rows, outcomes, true, 10_000, policy, () => 0.5)).toEqual([null, 14_000, null, null, null]);
  });

  it('a failure of its own the sink named a time for (429 Retry-After, in processing) waits that time, not a grown guess', () => {
    const rows = [{ attempts: 4 }, { attempts: 4 }, { attempts: 4 }];
    const outcomes: Outcome[] = [
      { kind: 'retry', reason: '429', scope: 'record', notBefore: 11_000 },
      { kind: 'retry', reason: '409 in processing', scope: 'record', notBefore: 10_200 },
      { kind: 'retry', reason: 'sink bug', scope: 'record' },
    ];
    // The first step's jitter still spreads the rows that share a Retry-After's second; the third grows to 2^4 s.
    expect(retryTimes(rows, outcomes, false, 10_000, policy, () => 0.9)).toEqual([11_000, 10_900, 24_400]);
    expect(retryTimes(rows, outcomes, true, 10_000, policy, () => 0.9)).toEqual([11_000, 10_900, 24_400]);
  });
});
