// The orders analyzers were sent, in the store: retention (a dispatch the LIMS has had for resultsDays goes; one still
// pending or dead stays), and the refused ones in an operator's hands (listed, retried, purged, audited) through the
// same `labgate dead-letter` command as the outbox's.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { DISPATCH_SINK } from '../../src/delivery/dispatch-contract.js';
import type { Outcome } from '../../src/delivery/contract.js';
import { pruneOnce } from '../../src/store/prune.js';
import type { Store } from '../../src/store/store.js';
import { scratchPerTest } from './store-fixtures.js';

const DAY = 86_400_000;
const scratch = scratchPerTest();

/** Claims every due dispatch and records `outcomeOf` its order id. */
function settle(store: Store, outcomeOf: (orderId: string) => Outcome): void {
  const rows = store.orders.dispatches.claimDue(DISPATCH_SINK, 100);
  store.orders.dispatches.recordOutcomes(
    DISPATCH_SINK,
    rows,
    rows.map((r) => outcomeOf(r.recordId)),
    rows.map(() => null),
  );
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await main(args, { stdout, stderr: new PassThrough(), stdin: Readable.from(['']), env: {} });
  return { code, out };
}

describe('dispatches in the store', () => {
  it('retention: sent and old goes; pending, dead or fresh stays', async () => {
    const s = scratch();
    const store = s.open();
    const t0 = s.clock.now();
    store.orders.recordSent(
      'chem-1',
      [
        { orderId: 'sent-old', accession: 'A' },
        { orderId: 'pending-old', accession: 'A' },
        { orderId: 'dead-old', accession: 'A' },
      ],
      t0,
      'query',
    );
    store.orders.recordSent('chem-1', [{ orderId: 'sent-new', accession: 'B' }], t0 + 20 * DAY, 'query');
    settle(store, (id) =>
      id === 'pending-old' ? { kind: 'retry', reason: 'LIMS down' } : id === 'dead-old' ? { kind: 'dead', reason: '404' } : { kind: 'delivered' },
    );
    const counts = await pruneOnce(store.db, { results: t0 + 10 * DAY, audit: 0, now: t0 + 40 * DAY });
    expect(counts.dispatches).toBe(1);
    expect(store.orders.sentOf('chem-1', ['sent-old', 'pending-old', 'dead-old', 'sent-new'])).toEqual(new Set(['pending-old', 'dead-old', 'sent-new']));
  });

  it('a refused dispatch is listed and retried by `labgate dead-letter`, audited with the operator', async () => {
    const s = scratch();
    const store = s.open();
    store.orders.recordSent(
      'chem-1',
      [
        { orderId: 'o1', accession: 'S1' },
        { orderId: 'o2', accession: 'S1' },
      ],
      s.clock.now(),
      'query',
    );
    settle(store, (id) => (id === 'o1' ? { kind: 'dead', reason: 'rejected by the LIMS: 404' } : { kind: 'delivered' }));
    const config = join(s.dataDir, 'labgate.yaml');
    writeFileSync(config, `gateway:\n  id: gw-1\n  dataDir: ${s.dataDir}\n`);
    const listed = await cli(['dead-letter', 'list', '--config', config]);
    expect(listed.out).toMatch(/^lims-dispatch\to1\|chem-1\t1 attempt\(s\)\t.*\trejected by the LIMS: 404\n$/);
    expect((await cli(['dead-letter', 'retry', '--config', config, '--sink', 'postgres'])).out).toContain('no dead letters match');
    const retried = await cli(['dead-letter', 'retry', '--config', config, '--sink', DISPATCH_SINK]);
    expect(retried.out).toMatch(/retrying 1 dead letter/);
    expect(store.orders.dispatches.counts()).toMatchObject({ pending: 1, sent: 1, dead: 0 });
    const audit = store.db.prepare(`SELECT action, subject FROM audit WHERE action = 'dead-letter-retry'`).all();
    expect(audit).toEqual([{ action: 'dead-letter-retry', subject: 'o1|chem-1' }]);
  });
});
