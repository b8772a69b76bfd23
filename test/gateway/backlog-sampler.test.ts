// The backlog sampler: a sample when the backlog may have changed, at most one per slot; a store that cannot write
// costs the chart a point and a log line, never the commit or the outcome that called it.
import { afterEach, describe, expect, it } from 'vitest';
import { BacklogSampler } from '../../src/gateway/backlog-sampler.js';
import { SLOT_MS } from '../../src/store/sink-figures.js';
import { scratch } from '../store/store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('BacklogSampler', () => {
  it('samples the pending counts at the first change of each slot', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const store = s.open();
    let pending = 5;
    const sampler = new BacklogSampler({ store, pending: () => [{ sink: 'lims', pending }], now: s.clock.now, log: { warn: () => {} } });
    sampler.note();
    pending = 9;
    sampler.note();
    s.clock.advance(SLOT_MS);
    sampler.note();
    expect(store.sinkFigures.backlogSince(0).map((b) => b.pending)).toEqual([5, 9]);
  });

  it('logs a sample the store refused and carries on', () => {
    const warned: string[] = [];
    const refusing = {
      sinkFigures: {
        sampleBacklog: () => {
          throw new Error('SQLITE_FULL');
        },
      },
    } as never;
    const sampler = new BacklogSampler({
      store: refusing,
      pending: () => [],
      now: () => 0,
      log: { warn: (_o: object, msg?: string) => void warned.push(msg ?? '') },
    });
    expect(() => sampler.note()).not.toThrow();
    expect(warned).toEqual(['backlog sample not recorded']);
  });
});
