// The bound on rejected captures kept as they are journaled, over a real store: past the bound the oldest go at once
// (no hourly timer), down to the newest nine tenths; what may not go does not make a run per message.
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/message.js';
import { RejectedBudget, keptBytes, nextRunAbove } from '../../src/store/rejected-budget.js';
import { Retention } from '../../src/store/retention.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../fixtures/manual-clock.js';
import { message, result, scratch } from './store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

function setup(): Store {
  const s = scratch();
  cleanups.push(s.cleanup);
  return s.open();
}

/** A rejected message of `bytes` raw bytes, with no result in it. */
const junk = (bytes: number, tag: string): InboundMessage => ({
  capture: { instrumentId: 'hl7-1', protocol: 'hl7', receivedAt: Date.UTC(2026, 6, 1), raw: Buffer.from(tag.padEnd(bytes, '#'), 'latin1') },
  results: [],
  rejections: [{ reason: 'message type (none) is not read' }],
});

/** Commits a rejected message and tells the budget, as the gateway's ingest port does after each commit. */
function journal(store: Store, budget: RejectedBudget, bytes: number, tag: string): void {
  store.ingest(junk(bytes, tag));
  budget.journaled(bytes);
}

const rejectedBytes = (store: Store): number =>
  store.db.prepare(`SELECT COALESCE(SUM(length(raw)), 0) FROM captures WHERE status = 'rejected'`).pluck().get() as number;

describe('RejectedBudget', () => {
  it('keeps nine tenths of the bound after a run, and starts the next run a tenth of it later', () => {
    expect(keptBytes(100_000)).toBe(90_000);
    expect(nextRunAbove(100_000, 90_000)).toBe(100_000);
    // What may not go is left above the bound: the next run waits for another tenth.
    expect(nextRunAbove(100_000, 150_000)).toBe(160_000);
  });

  it('prunes the oldest rejected captures as soon as the bound is passed, down to the newest nine tenths', async () => {
    const store = setup();
    const runs: unknown[] = [];
    const budget = new RejectedBudget(store.db, { maxBytes: 100_000, now: () => 0, batchSize: 7, onRun: (o) => runs.push(o) });
    for (let i = 0; i < 10; i++) journal(store, budget, 10_000, `junk ${i}`);
    await budget.settled();
    expect([runs, rejectedBytes(store)]).toEqual([[], 100_000]);
    journal(store, budget, 10_000, 'junk 10');
    await budget.settled();
    expect(runs).toEqual([{ removed: 2, keptBytes: 90_000 }]);
    const kept = store.db.prepare(`SELECT substr(raw, 1, 7) FROM captures WHERE status = 'rejected' ORDER BY id`).pluck().all() as Buffer[];
    expect(kept.map((b) => b.toString('latin1').replace(/#+$/, ''))).toEqual(Array.from({ length: 9 }, (_, i) => `junk ${i + 2}`));
    expect(budget.counted()).toBe(90_000);
    const audit = store.db.prepare(`SELECT detail FROM audit WHERE action = 'retention-pruned'`).pluck().all() as string[];
    expect(audit.map((d) => JSON.parse(d) as unknown)).toEqual([{ rejected: 2, rejectedBytesKept: 90_000 }]);
  });

  it('counts what was rejected before it started, and leaves captures with results and accepted ones alone', async () => {
    const store = setup();
    store.ingest({ ...message([result(0)]), rejections: [{ reason: 'unmapped code XYZ' }] });
    store.ingest(message([result(1)]));
    for (let i = 0; i < 5; i++) store.ingest(junk(1_000, `old ${i}`));
    const runs: { removed: number }[] = [];
    const budget = new RejectedBudget(store.db, { maxBytes: 1_000, now: () => 0, onRun: (o) => runs.push(o as { removed: number }) });
    journal(store, budget, 1_000, 'new');
    await budget.settled();
    expect(runs).toEqual([{ removed: 6, keptBytes: 900 }]);
    expect(store.db.prepare('SELECT status, result_count FROM captures ORDER BY id').raw().all()).toEqual([
      ['rejected', 1],
      ['accepted', 1],
    ]);
    // The capture with a result stays over the bound: the next messages do not each start a run.
    for (let i = 0; i < 10; i++) journal(store, budget, 10, `tiny ${i}`);
    await budget.settled();
    expect(runs).toHaveLength(1);
  });

  it('is kept by Retention between its hourly runs, and counted with them on the page', async () => {
    const store = setup();
    const clock = new ManualClock(Date.UTC(2026, 6, 1));
    const retention = new Retention({ db: store.db, clock, resultsDays: 30, auditDays: 365, rejectedMb: 1 });
    retention.start();
    for (let i = 0; i < 30; i++) {
      store.ingest(junk(100_000, `junk ${i}`));
      retention.rejectedJournaled(100_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await retention.stop();
    // No timer fired: the first hourly run is a minute away.
    expect(clock.now()).toBe(Date.UTC(2026, 6, 1));
    expect(rejectedBytes(store)).toBeLessThanOrEqual(1024 * 1024);
    expect(retention.rejectedBound()!.prunedSinceStart).toBeGreaterThanOrEqual(19);
  });
});
