// The clock part's first look at the synchronisation: an answer that comes at once (systemd-timesyncd's files) is
// known before the instruments start; one that takes long (timedated over D-Bus) does not hold the start, and is
// taken when it comes.
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { ClockSync } from '../../src/clock-sync.js';
import { ClockPart, FIRST_ANSWER_MS } from '../../src/gateway/clock-part.js';
import { createLogger } from '../../src/logger.js';

const quiet = createLogger({ level: 'fatal', destination: { write: () => {} } });
const parts: ClockPart[] = [];
afterEach(() => parts.splice(0).forEach((p) => p.stop()));

function clockPart(probe: () => Promise<ClockSync>): ClockPart {
  const part = new ClockPart({ steady: () => ({ check: () => null }), clock: systemClock, log: quiet, probe });
  parts.push(part);
  return part;
}

const UNSYNCHRONISED: ClockSync = { state: 'unsynchronised', source: 'systemd-timesyncd (no synchronisation since boot)' };

describe('the clock part at start', () => {
  it('knows a prompt answer before the start returns', async () => {
    const part = clockPart(async () => UNSYNCHRONISED);
    await part.start();
    expect(part.unsynchronised()).toBe(true);
    expect(part.status().state).toBe('unsynchronised');
  });

  it('does not wait for a slow answer, and takes it when it comes', async () => {
    let answer: (sync: ClockSync) => void = () => {};
    const part = clockPart(() => new Promise((resolve) => (answer = resolve)));
    const began = performance.now();
    await part.start();
    // Far below the probe's wait (it never answered during the start) and the timedated child's three-second timeout.
    expect(performance.now() - began).toBeLessThan(FIRST_ANSWER_MS + 1_000);
    expect(part.status().state).toBe('unknown');
    expect(part.unsynchronised()).toBe(false);
    answer(UNSYNCHRONISED);
    await new Promise((resolve) => setImmediate(resolve));
    expect(part.status()).toEqual(UNSYNCHRONISED);
    expect(part.unsynchronised()).toBe(true);
  });
});
