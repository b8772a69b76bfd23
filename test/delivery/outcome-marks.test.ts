// The drains' outcome marks written together: every sink's batches recorded within the delay go in one transaction
// (fewer WAL pages: the outbox pages, the due index and the counters they share are written once), at once when
// enough rows wait; a mark waiting keeps its rows in flight; a refused transaction reaches every batch in it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Drain } from '../../src/delivery/drain.js';
import type { OutboxRow, Outcome, Sink } from '../../src/delivery/contract.js';
import { OutcomeMarks } from '../../src/delivery/outcome-marks.js';
import type { OutcomeBatch } from '../../src/store/outbox-outcomes.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';
import { enqueue, sampleResult, states, testStore, type TestStore } from './fixture.js';

let s: TestStore;
let clock: ManualClock;
let transactions: number;
beforeEach(() => {
  s = testStore();
  clock = new ManualClock(s.clock.now);
  Object.defineProperty(s.clock, 'now', { get: () => clock.time });
  transactions = 0;
});
afterEach(() => s.close());

// The store's outbox, counting its recording transactions.
function counted(): ConstructorParameters<typeof OutcomeMarks>[0] {
  const outbox = s.outbox;
  return {
    claimDue: (sink, limit) => outbox.claimDue(sink, limit),
    release: (sink, rows) => outbox.release(sink, rows),
    nextDueAt: (sink) => outbox.nextDueAt(sink),
    recordBatches: (batches: readonly OutcomeBatch[]) => {
      transactions++;
      outbox.recordBatches(batches);
    },
  };
}

const delivered = (rows: readonly OutboxRow[]): Outcome[] => rows.map(() => ({ kind: 'delivered' }));
const sinkNamed = (name: string): Sink => ({ name, deliver: async (batch) => delivered(batch), close: async () => {} });
const policy = { backoff: { baseMs: 1_000, capMs: 60_000 }, probeIntervalMs: 15_000, failureThreshold: 5, batchSize: 50, inFlight: 2 };

describe('outcome marks', () => {
  it('writes both sinks’ batches in one transaction once the delay has passed, their rows in flight until then', async () => {
    for (const sink of ['postgres', 'lims'])
      enqueue(
        s.db,
        sink,
        [0, 1, 2].map((i) => sampleResult(i)),
        clock.now(),
      );
    const marks = new OutcomeMarks(counted(), clock, { delayMs: 100, maxRows: 1_000 });
    const drains = ['postgres', 'lims'].map((name) => new Drain({ sink: sinkNamed(name), outbox: marks, policy, clock, random: () => 0.5 }));
    drains.forEach((d) => d.start());
    await settle();
    expect(transactions).toBe(0);
    expect(states(s.db, 'postgres')).toEqual({ pending: 3 });
    // Waiting to be marked, the rows are not claimed again.
    expect(s.outbox.claimDue('postgres', 10)).toEqual([]);
    expect(drains.map((d) => d.status().delivered)).toEqual([0, 0]);
    clock.advance(100);
    await settle();
    expect(transactions).toBe(1);
    expect([states(s.db, 'postgres'), states(s.db, 'lims')]).toEqual([{ sent: 3 }, { sent: 3 }]);
    expect(drains.map((d) => d.status().delivered)).toEqual([3, 3]);
    expect(s.outbox.inFlightCount('postgres') + s.outbox.inFlightCount('lims')).toBe(0);
    await Promise.all(drains.map((d) => d.stop()));
  });

  it('writes at once when maxRows rows wait, and flush() writes what waits without the delay', async () => {
    const keys = enqueue(
      s.db,
      'lims',
      [0, 1, 2, 3].map((i) => sampleResult(i)),
      clock.now(),
    );
    const marks = new OutcomeMarks(counted(), clock, { delayMs: 100, maxRows: 3 });
    const rows = s.outbox.claimDue('lims', 10);
    const first = marks.recordOutcomes('lims', rows.slice(0, 2), delivered(rows.slice(0, 2)), [null, null]);
    expect(transactions).toBe(0);
    const second = marks.recordOutcomes('lims', rows.slice(2, 3), delivered(rows.slice(2, 3)), [null]);
    expect(transactions).toBe(1);
    await Promise.all([first, second]);
    const last = marks.recordOutcomes('lims', rows.slice(3), delivered(rows.slice(3)), [null]);
    marks.flush();
    await last;
    expect(transactions).toBe(2);
    expect(states(s.db, 'lims')).toEqual({ sent: keys.length });
    expect(clock.pending).toBe(0);
  });

  it('rejects every batch of a transaction the store refused, and their rows can be claimed again', async () => {
    enqueue(
      s.db,
      'lims',
      [0, 1].map((i) => sampleResult(i)),
      clock.now(),
    );
    const refusing = {
      ...counted(),
      recordBatches: () => {
        throw new Error('disk I/O error');
      },
    };
    const marks = new OutcomeMarks(refusing, clock, { delayMs: 100, maxRows: 1_000 });
    const rows = s.outbox.claimDue('lims', 10);
    const outcomes = [0, 1].map((i) => marks.recordOutcomes('lims', [rows[i]!], delivered([rows[i]!]), [null]).catch((err: Error) => err.message));
    clock.advance(100);
    expect(await Promise.all(outcomes)).toEqual(['disk I/O error', 'disk I/O error']);
    marks.release('lims', rows);
    expect(s.outbox.claimDue('lims', 10)).toHaveLength(2);
    expect(states(s.db, 'lims')).toEqual({ pending: 2 });
  });
});
