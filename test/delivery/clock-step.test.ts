// A drain on a real store while the wall clock steps (NTP answering a Pi that booted with a stale time): retries,
// probes and Retry-After waits keep their length, a step forward brings nothing forward, and the page's times stay
// "so long ago" rather than hours in the future.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboxRow, Outcome, Sink } from '../../src/delivery/contract.js';
import { Drain } from '../../src/delivery/drain.js';
import { steadyClock } from '../../src/store/steady-time.js';
import { openStore, type Store } from '../../src/store/store.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';
import { message, result, scratchPerTest } from '../store/store-fixtures.js';

const HOUR = 3_600_000;
const YEAR = 365 * 24 * HOUR;
const scratch = scratchPerTest();

let clock: ManualClock;
let store: Store;
let answer: (row: OutboxRow) => Outcome;
let sent: number;
const sink: Sink = {
  name: 'lims',
  deliver: async (batch) => {
    sent += batch.length;
    return batch.map((row) => answer(row));
  },
  close: async () => {},
};
const delivered = (): Outcome => ({ kind: 'delivered' });
// random 0.5 of min(cap, base * 2^0): a record's first retry waits 5 s.
const policy = { backoff: { baseMs: 10_000, capMs: 60_000 }, probeIntervalMs: 15_000, failureThreshold: 1, batchSize: 10, inFlight: 1 };

function drain(): Drain {
  return new Drain({ sink, outbox: store.outbox, policy, clock: steadyClock(clock, store.steady), random: () => 0.5 });
}
const pending = (): number => store.db.prepare(`SELECT count(*) FROM outbox WHERE state = 'pending'`).pluck().get() as number;

beforeEach(() => {
  clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
  store = openStore({ dataDir: scratch().dataDir, sinks: ['lims'], now: () => clock.now(), monotonic: () => clock.monotonic() });
  store.ingest(message([result(1)]));
  sent = 0;
});
afterEach(() => store.close());

describe('a drain across wall-clock steps', () => {
  for (const [name, step] of [
    ['back two hours', -2 * HOUR],
    ['forward a year', YEAR],
  ] as const) {
    it(`retries a record due in 5 s after 5 s when the clock steps ${name}`, async () => {
      answer = () => ({ kind: 'retry', reason: '409 in processing', scope: 'record' });
      const d = drain();
      d.start();
      await settle();
      expect(sent).toBe(1);
      answer = delivered;
      clock.step(step);
      // A new result wakes the drain: it goes at once, the waiting one does not go with it.
      store.ingest(message([result(2)]));
      d.notify();
      await clock.advanceSettling(4_999);
      expect([sent, pending()]).toEqual([2, 1]);
      await clock.advanceSettling(1);
      expect([sent, pending()]).toEqual([3, 0]);
      await d.stop();
    });

    it(`probes a paused sink at its interval, and waits a Retry-After its length, when the clock steps ${name}`, async () => {
      answer = () => ({ kind: 'retry', reason: 'ECONNREFUSED', scope: 'unreachable' });
      const d = drain();
      d.start();
      await settle();
      const pausedAt = clock.now();
      clock.step(step);
      await clock.advanceSettling(10_000);
      // The page says paused 10 s ago, not two hours in the future nor a year ago.
      expect(d.status()).toMatchObject({ circuit: 'open', pausedSince: clock.now() - 10_000, nextProbeAt: clock.now() + 5_000 });
      expect(clock.now() - pausedAt).toBe(step + 10_000);
      expect(sent).toBe(1);
      // The sink names a time on its own (wall) clock; the drain waits that long, whatever the step.
      answer = () => ({ kind: 'retry', reason: '503', scope: 'unreachable', notBefore: clock.now() + 30_000 });
      await clock.advanceSettling(5_000);
      expect(sent).toBe(2);
      answer = delivered;
      clock.step(-step);
      await clock.advanceSettling(29_999);
      expect(sent).toBe(2);
      await clock.advanceSettling(1);
      expect(sent).toBe(3);
      expect(pending()).toBe(0);
      await d.stop();
    });
  }
});
