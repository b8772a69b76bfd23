// The whole correction path, store to central PostgreSQL: a result is loaded, the analyzer sends the same key with
// another value (an ingest conflict, kept aside), a person forwards the new version, and PostgreSQL replaces exactly
// the version it held; a conflict PostgreSQL reported is forwarded the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dedupKey } from '../../src/result.js';
import { createPostgresSink, type PostgresSink } from '../../src/sinks/postgres.js';
import type { Store } from '../../src/store/store.js';
import { message, result, scratch } from '../store/store-fixtures.js';
import { audited, loaded, testDatabase, type TestDatabase } from './pg.js';

let db: TestDatabase;
let sink: PostgresSink;
const never = new AbortController().signal;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  db = await testDatabase();
  sink = createPostgresSink({ url: db.url, schema: db.schema, poolSize: 1, gatewayId: 'gw-test' }, { pool: db.pool });
});
afterAll(async () => {
  for (const cleanup of cleanups) cleanup();
  await db.close();
});

function openStore(): Store {
  const s = scratch();
  cleanups.push(s.cleanup);
  return s.open({ sinks: ['postgres'] });
}

/** Claims everything due for postgres, delivers it, records the outcomes; returns the outcome kinds. */
async function drainOnce(store: Store): Promise<string[]> {
  const rows = store.outbox.claimDue('postgres', 100);
  const outcomes = await sink.deliver(rows, never);
  store.outbox.recordOutcomes(
    'postgres',
    rows,
    outcomes,
    outcomes.map(() => null),
  );
  return outcomes.map((o) => ('detail' in o && o.detail ? o.detail : o.kind));
}

describe('a correction forwarded by a person reaches central PostgreSQL', () => {
  it('replaces the loaded version after an ingest conflict', async () => {
    const store = openStore();
    const original = result(11);
    const key = dedupKey(original);
    store.ingest(message([original]));
    expect(await drainOnce(store)).toEqual(['inserted']);

    expect(store.ingest(message([result(11, { valueText: '6.3', value: 6.3, status: 'correction' })]))).toMatchObject({ conflicts: 1 });
    expect(await drainOnce(store)).toEqual([]);
    const [conflict] = store.openConflicts(10);
    expect(store.resolveConflict(conflict!.id, 'forward', 'tech-1')).toMatchObject({ kind: 'done', queued: ['postgres'] });

    expect(await drainOnce(store)).toEqual(['corrected']);
    expect((await loaded(db)).get(key)).toMatchObject({ value_text: '6.3', value: 6.3 });
    expect((await audited(db)).get(key)).toEqual(['inserted', 'corrected']);
  });

  it("replaces the version PostgreSQL reported in a conflict, when a person forwards labgate's", async () => {
    const store = openStore();
    const ours = result(12);
    const key = dedupKey(ours);
    // Another gateway loaded a different version of the same key first.
    const other = openStore();
    other.ingest(message([result(12, { valueText: '9.9', value: 9.9 })]));
    expect(await drainOnce(other)).toEqual(['inserted']);

    store.ingest(message([ours]));
    expect(await drainOnce(store)).toEqual(['conflict']);
    const [conflict] = store.openConflicts(10);
    expect(conflict).toMatchObject({ origin: 'postgres' });
    store.resolveConflict(conflict!.id, 'forward', 'tech-1');

    expect(await drainOnce(store)).toEqual(['corrected']);
    expect((await loaded(db)).get(key)).toMatchObject({ value_text: ours.valueText, value: ours.value });
  });
});
