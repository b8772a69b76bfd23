// Retention of the orders analyzers were sent: a dispatch the LIMS has had for resultsDays goes; one still pending or
// dead stays, whatever its age, and so does a fresh one.
import { describe, expect, it } from 'vitest';
import { DISPATCH_SINK } from '../../src/delivery/dispatch-contract.js';
import { pruneOnce } from '../../src/store/prune.js';
import { scratchPerTest } from './store-fixtures.js';

const DAY = 86_400_000;
const scratch = scratchPerTest();

describe('dispatch retention', () => {
  it('sent and old: gone; pending, dead or fresh: kept', async () => {
    const s = scratch();
    const store = s.open();
    const t0 = s.clock.now();
    store.orders.recordSent('chem-1', [{ orderId: 'sent-old', accession: 'A' }, { orderId: 'pending-old', accession: 'A' }, { orderId: 'dead-old', accession: 'A' }], t0, 'query');
    store.orders.recordSent('chem-1', [{ orderId: 'sent-new', accession: 'B' }], t0 + 20 * DAY, 'query');
    const rows = store.orders.dispatches.claimDue(DISPATCH_SINK, 10);
    const outcome = (id: string) => (id === 'pending-old' ? { kind: 'retry' as const, reason: 'LIMS down' } : id === 'dead-old' ? { kind: 'dead' as const, reason: '404' } : { kind: 'delivered' as const });
    store.orders.dispatches.recordOutcomes(DISPATCH_SINK, rows, rows.map((r) => outcome(r.recordId)), rows.map(() => null));
    const counts = await pruneOnce(store.db, { results: t0 + 10 * DAY, audit: 0, now: t0 + 40 * DAY });
    expect(counts.dispatches).toBe(1);
    expect(store.orders.sentOf('chem-1', ['sent-old', 'pending-old', 'dead-old', 'sent-new'])).toEqual(new Set(['pending-old', 'dead-old', 'sent-new']));
  });
});
