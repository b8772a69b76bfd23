// The drain on real SQLite with an injected clock and a scripted sink: wakes on notify and on due time, arms no
// timer while idle, pauses a down sink without burning attempts, bounds batches in flight, stops cleanly.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Drain } from '../../src/delivery/drain.js';
import { OutcomeMarks } from '../../src/delivery/outcome-marks.js';
import type { OutboxRow, Outcome, Sink } from '../../src/delivery/contract.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';
import { enqueue, sampleResult, states, testStore, type TestStore } from './fixture.js';

type Handler = (batch: readonly OutboxRow[], signal: AbortSignal) => Promise<Outcome[]> | Outcome[];

let s: TestStore;
let clock: ManualClock;
let handler: Handler;
let calls: number[];
const sink: Sink = {
  name: 'lims',
  deliver: async (batch, signal) => {
    calls.push(batch.length);
    return handler(batch, signal);
  },
  close: async () => {},
};
const ok: Handler = (batch) => batch.map(() => ({ kind: 'delivered' }));
const policy = { backoff: { baseMs: 1_000, capMs: 60_000 }, probeIntervalMs: 15_000, failureThreshold: 5, batchSize: 10, inFlight: 2 };

function drain(over: Partial<typeof policy> = {}): Drain {
  return new Drain({ sink, outbox: s.outbox, policy: { ...policy, ...over }, clock, random: () => 0.5 });
}
const add = (n: number, from: number, dueAt = clock.now()) =>
  enqueue(
    s.db,
    'lims',
    Array.from({ length: n }, (_, i) => sampleResult(from + i)),
    dueAt,
  );

beforeEach(() => {
  s = testStore();
  clock = new ManualClock(s.clock.now);
  s.clock.now = clock.time;
  Object.defineProperty(s.clock, 'now', { get: () => clock.time });
  handler = ok;
  calls = [];
});
afterEach(() => s.close());

describe('drain', () => {
  it('idles with no timer armed and wakes on notify', async () => {
    const d = drain();
    d.start();
    await settle();
    expect(calls).toEqual([]);
    expect(clock.armed).toEqual([]);
    add(25, 0);
    d.notify();
    await settle();
    expect(calls).toEqual([10, 10, 5]);
    expect(states(s.db, 'lims')).toEqual({ sent: 25 });
    expect(clock.armed).toEqual([]);
    expect(d.status()).toMatchObject({ circuit: 'closed', delivered: 25, recentRate: 25 / 60 });
    await d.stop();
  });

  it('wakes on the next due time without being told', async () => {
    add(3, 0, clock.now() + 30_000);
    const d = drain();
    d.start();
    await settle();
    expect(clock.armed).toEqual([clock.now() + 30_000]);
    clock.advance(29_999);
    await settle();
    expect(calls).toEqual([]);
    clock.advance(1);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 3 });
    await d.stop();
  });

  it('retries a record-level failure after a jittered backoff', async () => {
    add(1, 0);
    handler = (batch) => batch.map(() => ({ kind: 'retry', reason: '409 in processing' }));
    const d = drain();
    d.start();
    await settle();
    expect(clock.armed).toEqual([clock.now() + 500]); // random 0.5 of min(cap, 1000 * 2^0)
    handler = ok;
    clock.advance(500);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 1 });
    await d.stop();
  });

  it('an isolated sink-wide failure among answers costs its row a retry, not a pause', async () => {
    const keys = add(10, 0);
    const failing = new Set([keys[3], keys[7]]);
    handler = (batch) =>
      batch.map((row) => {
        if (!failing.delete(row.dedupKey)) return { kind: 'delivered' };
        return row.dedupKey === keys[3]
          ? { kind: 'retry', reason: 'response lost', scope: 'sink' }
          : { kind: 'retry', reason: '503', scope: 'sink', notBefore: clock.now() + 2_000 };
      });
    const d = drain();
    d.start();
    await settle();
    expect(d.status()).toMatchObject({ circuit: 'closed', delivered: 8, lastError: '503' });
    expect(states(s.db, 'lims')).toEqual({ sent: 8, pending: 2 });
    // Each row waits on its own: its jittered backoff (0.5 of 1000 ms), or the sink's Retry-After.
    expect(clock.armed).toEqual([clock.now() + 500]);
    clock.advance(500);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 9, pending: 1 });
    expect(clock.armed).toEqual([clock.now() + 1_500]);
    clock.advance(1_500);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 10 });
    expect(calls).toEqual([10, 1, 1]);
    expect(s.db.prepare('SELECT SUM(attempts) FROM outbox').pluck().get()).toBe(2);
    await d.stop();
  });

  it("a sink-wide failure waits the first backoff step whatever the row's attempts; a failure of its own grows", async () => {
    const [sinkWide, own] = add(2, 0);
    s.db.prepare('UPDATE outbox SET attempts = 3').run();
    handler = (batch) =>
      batch.map((row) => ({
        kind: 'retry',
        reason: row.dedupKey === sinkWide ? '503' : '409 in processing',
        scope: row.dedupKey === sinkWide ? 'sink' : 'record',
      }));
    const d = drain();
    d.start();
    await settle();
    const due = s.db.prepare('SELECT dedup_key, next_attempt_at - ? FROM outbox').raw().all(clock.now());
    // 0.5 of min(cap, 1000 * 2^0) for the sink's failure; 0.5 of 1000 * 2^3 for the row's own.
    expect(Object.fromEntries(due as [string, number][])).toEqual({ [sinkWide!]: 500, [own!]: 4_000 });
    await d.stop();
  });

  it('failureThreshold sink-wide failures in a row pause the sink, across batches', async () => {
    add(10, 0);
    handler = (batch) => batch.map(() => ({ kind: 'retry', reason: 'timed out', scope: 'sink' }));
    const d = drain({ batchSize: 2, inFlight: 1 });
    d.start();
    await settle();
    // Two batches of two failures leave the breaker closed (4 < 5) and their rows backing off; the fifth failure opens it.
    expect(calls).toEqual([2, 2, 2]);
    expect(d.status()).toMatchObject({ circuit: 'open', nextProbeAt: clock.now() + 15_000, lastError: 'timed out' });
    const attempts = s.db.prepare('SELECT attempts FROM outbox ORDER BY id').pluck().all();
    expect(attempts).toEqual([1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
    handler = ok;
    clock.advance(15_000);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 10 });
    expect(d.status().circuit).toBe('closed');
    await d.stop();
  });

  it('a refused connection pauses the sink at once, probing at its Retry-After when it gave one', async () => {
    add(3, 0);
    handler = (batch) => batch.map(() => ({ kind: 'retry', reason: 'ECONNREFUSED', scope: 'unreachable' }));
    const d = drain({ batchSize: 1, inFlight: 1 });
    d.start();
    await settle();
    expect(calls).toEqual([1]);
    expect(d.status()).toMatchObject({ circuit: 'open', nextProbeAt: clock.now() + 15_000 });
    handler = (batch) => batch.map(() => ({ kind: 'retry', reason: '503', scope: 'unreachable', notBefore: clock.now() + 4_000 }));
    clock.advance(15_000);
    await settle();
    expect(d.status()).toMatchObject({ circuit: 'open', nextProbeAt: clock.now() + 4_000 });
    handler = ok;
    clock.advance(4_000);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 3 });
    expect(s.db.prepare('SELECT MAX(attempts) FROM outbox').pluck().get()).toBe(0);
    await d.stop();
  });

  it('pauses a down sink, probes with one row, and never burns attempts or dead-letters', async () => {
    add(30, 0);
    handler = (batch) => batch.map(() => ({ kind: 'retry', reason: 'ECONNREFUSED', scope: 'sink' }));
    const d = drain();
    d.start();
    await settle();
    expect(d.status()).toMatchObject({ circuit: 'open', nextProbeAt: clock.now() + 15_000 });
    for (let probe = 0; probe < 240; probe++) {
      clock.advance(15_000);
      await settle();
    }
    expect(calls.slice(0, 3)).toEqual([10, 10, 1]);
    expect(calls.slice(2).every((n) => n === 1)).toBe(true);
    expect(s.db.prepare(`SELECT MAX(attempts) FROM outbox`).pluck().get()).toBe(0);
    handler = ok;
    clock.advance(15_000);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 30 });
    expect(d.status().circuit).toBe('closed');
    await d.stop();
  });

  it('keeps at most inFlight batches out and stops after they finish, with the signal aborted', async () => {
    add(50, 0);
    const pending: { resolve: () => void; signal: AbortSignal }[] = [];
    handler = (batch, signal) => new Promise((resolve) => pending.push({ signal, resolve: () => resolve(batch.map(() => ({ kind: 'delivered' }))) }));
    const d = drain();
    d.start();
    await settle();
    expect(calls).toEqual([10, 10]);
    const stopped = d.stop();
    expect(pending.every((p) => p.signal.aborted)).toBe(true);
    pending.forEach((p) => p.resolve());
    await stopped;
    expect(states(s.db, 'lims')).toEqual({ sent: 20, pending: 30 });
    expect(calls).toEqual([10, 10]);
    expect(clock.armed).toEqual([]);
  });

  it('claims the next batch while the sink is busy, and lets it go on a pause and on stop', async () => {
    add(50, 0);
    const pending: ((outcome: Outcome) => void)[] = [];
    handler = (batch) => new Promise((resolve) => pending.push((o) => resolve(batch.map(() => o))));
    const d = drain();
    d.start();
    await settle();
    expect(calls).toEqual([10, 10]);
    expect(s.outbox.inFlightCount('lims')).toBe(20);
    pending.shift()!({ kind: 'delivered' });
    await settle();
    // The finished batch was followed at once by the one claimed ahead, and the next is claimed ahead again.
    expect(calls).toEqual([10, 10, 10]);
    expect(s.outbox.inFlightCount('lims')).toBe(30);
    pending.shift()!({ kind: 'retry', reason: 'ECONNREFUSED', scope: 'sink' });
    await settle();
    expect(d.status().circuit).toBe('open');
    expect(s.outbox.inFlightCount('lims')).toBe(10);
    const stopped = d.stop();
    pending.shift()!({ kind: 'delivered' });
    await stopped;
    expect(s.outbox.inFlightCount('lims')).toBe(0);
    expect(states(s.db, 'lims')).toEqual({ sent: 20, pending: 30 });
  });

  it('claims the next batch while outcome marks wait to be written with others', async () => {
    add(50, 0);
    const pending: (() => void)[] = [];
    handler = (batch) => new Promise((resolve) => pending.push(() => resolve(batch.map(() => ({ kind: 'delivered' })))));
    const marks = new OutcomeMarks(s.outbox, clock, { delayMs: 100, maxRows: 1_000 });
    const d = new Drain({ sink, outbox: marks, policy, clock, random: () => 0.5 });
    d.start();
    await settle();
    pending.shift()!();
    await settle();
    // Out: two batches; claimed ahead: one; waiting for its mark: the first. Nothing is written yet.
    expect(calls).toEqual([10, 10, 10]);
    expect(s.outbox.inFlightCount('lims')).toBe(40);
    expect(states(s.db, 'lims')).toEqual({ pending: 50 });
    clock.advance(100);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 10, pending: 40 });
    const stopped = d.stop();
    pending.forEach((resolve) => resolve());
    await settle();
    clock.advance(100);
    await stopped;
    expect(s.outbox.inFlightCount('lims')).toBe(0);
  });

  it('pauses instead of spinning when the store cannot record outcomes', async () => {
    add(3, 0);
    const record = s.outbox.recordOutcomes.bind(s.outbox);
    let failures = 0;
    s.outbox.recordOutcomes = () => {
      failures++;
      throw new Error('SQLITE_FULL');
    };
    const d = drain();
    d.start();
    await settle();
    expect(failures).toBe(1);
    expect(d.status()).toMatchObject({ circuit: 'open', lastError: 'store: SQLITE_FULL' });
    s.outbox.recordOutcomes = record;
    clock.advance(15_000);
    await settle();
    clock.advance(15_000);
    await settle();
    expect(states(s.db, 'lims')).toEqual({ sent: 3 });
    await d.stop();
  });

  it('treats a sink that throws as down, not as bad data', async () => {
    add(2, 0);
    handler = () => {
      throw new Error('bug');
    };
    const d = drain();
    d.start();
    await settle();
    expect(states(s.db, 'lims')).toEqual({ pending: 2 });
    expect(d.status()).toMatchObject({ circuit: 'open', lastError: 'sink error: bug' });
    await d.stop();
  });
});
