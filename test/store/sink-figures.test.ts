// Each sink's deliveries per hour (from the per-minute counts the outcome transaction keeps) and its backlog samples
// (one per sink and slot, the oldest dropped), over a real store.
import { afterEach, describe, expect, it } from 'vitest';
import { KEEP_MS, SLOT_MS } from '../../src/store/sink-figures.js';
import { message, result, scratch } from './store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('sink figures', () => {
  it('counts deliveries per hour from what the outcome transactions marked sent', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const store = s.open();
    store.ingest(message([result(1), result(2), result(3)]));
    const deliver = (n: number): void => {
      const rows = store.outbox.claimDue('lims', n);
      store.outbox.recordOutcomes(
        'lims',
        rows,
        rows.map(() => ({ kind: 'delivered' })),
        rows.map(() => null),
      );
    };
    deliver(2);
    s.clock.advance(3_600_000);
    deliver(1);
    const hour = Math.floor((s.clock.now() - 3_600_000) / 3_600_000);
    expect(store.sinkFigures.deliveredPerHour(hour)).toEqual([
      { sink: 'lims', hour, delivered: 2 },
      { sink: 'lims', hour: hour + 1, delivered: 1 },
    ]);
    expect(store.sinkFigures.deliveredPerHour(hour + 1)).toHaveLength(1);
  });

  it('keeps one backlog sample per sink and slot, the later one, and forgets those older than a day and an hour', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const store = s.open();
    const t0 = Math.floor(Date.UTC(2026, 6, 1, 12) / SLOT_MS) * SLOT_MS;
    store.sinkFigures.sampleBacklog(
      [
        { sink: 'lims', pending: 5 },
        { sink: 'postgres', pending: 0 },
      ],
      t0,
    );
    store.sinkFigures.sampleBacklog([{ sink: 'lims', pending: 7 }], t0 + 1_000);
    store.sinkFigures.sampleBacklog([{ sink: 'lims', pending: 9 }], t0 + SLOT_MS);
    expect(store.sinkFigures.backlogSince(0)).toEqual([
      { sink: 'lims', at: t0 + 1_000, pending: 7 },
      { sink: 'lims', at: t0 + SLOT_MS, pending: 9 },
      { sink: 'postgres', at: t0, pending: 0 },
    ]);
    store.sinkFigures.sampleBacklog([{ sink: 'lims', pending: 1 }], t0 + KEEP_MS + 2 * SLOT_MS);
    expect(store.sinkFigures.backlogSince(0).map((b) => b.pending)).toEqual([1]);
  });
});
