// The outbox counts a running gateway's readers share: made on the event loop while counting is quick, off it (a
// worker thread with its own connection) once a count took long, and the same counts either way.
import { afterEach, describe, expect, it } from 'vitest';
import type { SinkCounts } from '../../src/store/outbox-operator.js';
import { CountWorker } from '../../src/store/count-worker.js';
import { COUNTS_TTL_MS, OutboxCounts, SLOW_COUNT_MS } from '../../src/store/outbox-counts.js';
import { message, result, scratch } from './store-fixtures.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const pending = (n: number): SinkCounts[] => [{ sink: 'postgres', pending: n, sent: 0, dead: 0, conflict: 0, oldestPendingAt: null }];

/** A count source on a clock of our own: each count on the loop takes `costMs`, each off it answers when told. */
function sources(costMs: number) {
  let t = 0;
  let n = 0;
  const onLoop: number[] = [];
  const later: { answer: (counts: SinkCounts[]) => void; fail: (err: Error) => void }[] = [];
  return {
    clock: { advance: (ms: number) => void (t += ms), monotonic: () => t },
    setPending: (value: number) => void (n = value),
    onLoop,
    later,
    read: (): SinkCounts[] => {
      onLoop.push(t);
      t += costMs;
      return pending(n);
    },
    readLater: (): Promise<SinkCounts[]> => new Promise((answer, fail) => later.push({ answer, fail })),
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('OutboxCounts', () => {
  it('shares a quick count while nothing changes, and counts again on the loop after a commit', () => {
    const s = sources(1);
    const counts = new OutboxCounts(s.read, s.readLater, s.clock.monotonic);
    s.setPending(3);
    expect(counts.current()[0]!.pending).toBe(3);
    s.setPending(4);
    expect(counts.current()[0]!.pending).toBe(3);
    counts.invalidate();
    expect(counts.current()[0]!.pending).toBe(4);
    s.setPending(5);
    s.clock.advance(COUNTS_TTL_MS + 1);
    expect(counts.current()[0]!.pending).toBe(5);
    expect(s.onLoop).toHaveLength(3);
    expect(s.later).toHaveLength(0);
  });

  it('after a slow count, counts off the loop at most once a TTL and serves the last count meanwhile', async () => {
    const s = sources(SLOW_COUNT_MS + 30);
    const counts = new OutboxCounts(s.read, s.readLater, s.clock.monotonic);
    s.setPending(1_000_000);
    expect(counts.current()[0]!.pending).toBe(1_000_000);
    counts.invalidate();
    // Within the TTL: the last count, nothing counted anywhere.
    expect(counts.current()[0]!.pending).toBe(1_000_000);
    expect(s.later).toHaveLength(0);
    s.clock.advance(COUNTS_TTL_MS + 1);
    expect(counts.current()[0]!.pending).toBe(1_000_000);
    expect(counts.current()[0]!.pending).toBe(1_000_000);
    expect(s.onLoop).toHaveLength(1);
    expect(s.later).toHaveLength(1);
    s.clock.advance(SLOW_COUNT_MS + 5);
    s.later[0]!.answer(pending(990_000));
    await settle();
    expect(counts.current()[0]!.pending).toBe(990_000);
    // Still slow: the next count is off the loop too; this one is quick, so the one after is made on the loop again.
    s.clock.advance(COUNTS_TTL_MS + 1);
    counts.current();
    expect(s.later).toHaveLength(2);
    s.later[1]!.answer(pending(12));
    await settle();
    expect(counts.current()[0]!.pending).toBe(12);
    s.setPending(11);
    counts.invalidate();
    expect(counts.current()[0]!.pending).toBe(11);
    expect(s.onLoop).toHaveLength(2);
  });

  it('counts on the loop again when the worker cannot, and always without one', async () => {
    const s = sources(SLOW_COUNT_MS + 30);
    const counts = new OutboxCounts(s.read, s.readLater, s.clock.monotonic);
    counts.current();
    s.clock.advance(COUNTS_TTL_MS + 1);
    counts.current();
    s.later[0]!.fail(new Error('SQLITE_IOERR'));
    await settle();
    s.setPending(7);
    expect(counts.current()[0]!.pending).toBe(7);
    expect(s.onLoop).toHaveLength(2);

    const alone = sources(SLOW_COUNT_MS + 30);
    const onLoopOnly = new OutboxCounts(alone.read, undefined, alone.clock.monotonic);
    onLoopOnly.current();
    alone.clock.advance(COUNTS_TTL_MS + 1);
    alone.setPending(2);
    expect(onLoopOnly.current()[0]!.pending).toBe(2);
    expect(alone.onLoop).toHaveLength(2);
  });
});

describe('CountWorker', () => {
  it("counts in its own thread what the store's connection counts, of every state, and sees later commits", async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const store = s.open();
    for (let n = 0; n < 6; n++) store.ingest(message([result(n)]));
    const rows = store.outbox.claimDue('postgres', 3);
    store.outbox.recordOutcomes('postgres', rows, [{ kind: 'delivered' }, { kind: 'dead', reason: '22008' }, { kind: 'delivered' }], [null, null, null]);
    const worker = new CountWorker(store.db.name);
    cleanups.push(() => worker.close());
    const expected = store.outbox.counts();
    expect(expected.find((c) => c.sink === 'postgres')).toMatchObject({ pending: 3, sent: 2, dead: 1 });
    expect(await worker.count()).toEqual(expected);
    store.ingest(message([result(6)]));
    const [first, second] = await Promise.all([worker.count(), worker.count()]);
    expect(first).toEqual(store.outbox.counts());
    expect(second).toEqual(first);
    expect(first!.find((c) => c.sink === 'lims')!.pending).toBe(7);
  });

  it('refuses counts once closed, and one it cannot make says why', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const missing = new CountWorker(`${s.dataDir}/no-such.db`);
    await expect(missing.count()).rejects.toThrow(/count/);
    await missing.close();
    await expect(missing.count()).rejects.toThrow(/closed/);
  });
});
