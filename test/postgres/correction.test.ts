// Forwarded corrections in central PostgreSQL: a compare-and-set on the clinical content (payload `supersedes`).
// Applied once, its replay absorbed, a stale `supersedes` (a third version) still a conflict, never overwritten.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { clinicalContent, type KeyedResult } from '../../src/result.js';
import { createPostgresSink, type PostgresSink } from '../../src/sinks/postgres.js';
import type { OutboxRow } from '../../src/delivery/contract.js';
import { sampleResult } from '../delivery/fixture.js';
import { audited, loaded, outboxRow, testDatabase, type TestDatabase } from './pg.js';

let db: TestDatabase;
let sink: PostgresSink;
let ids = 0;
const never = new AbortController().signal;

beforeAll(async () => {
  db = await testDatabase();
  sink = createPostgresSink({ url: db.url, schema: db.schema, poolSize: 1, gatewayId: 'gw-test' }, { pool: db.pool });
});
afterAll(async () => {
  await db.close();
});

/** An outbox row carrying `result`; `supersedes` set as on a person's forward. */
function row(result: KeyedResult, supersedes?: string): OutboxRow {
  return outboxRow(++ids, result, supersedes);
}

const detail = (outcomes: readonly { kind: string }[]): unknown[] => outcomes.map((o) => ('detail' in o ? o.detail : o.kind));

describe('forwarded corrections in central PostgreSQL', () => {
  it('applies a correction once; its replay is absorbed; a stale supersedes stays a conflict', async () => {
    const original = sampleResult(1);
    const corrected = sampleResult(1, { valueText: '6.3', value: 6.3, status: 'correction', flags: ['H'] });
    const key = row(original).dedupKey;
    expect(detail(await sink.deliver([row(original)], never))).toEqual(['inserted']);

    const forward = row(corrected, clinicalContent(original));
    expect(await sink.deliver([forward], never)).toEqual([{ kind: 'delivered', detail: 'corrected' }]);
    expect((await loaded(db)).get(key)).toMatchObject({ value_text: '6.3', value: 6.3, load_count: 2 });

    // The "sent" mark was lost: the same correction again is a replay.
    expect(await sink.deliver([forward], never)).toEqual([{ kind: 'delivered', detail: 'absorbed' }]);

    // A third version that names the original (no longer stored) is a conflict; the correction stays.
    const third = row(sampleResult(1, { valueText: '7.0', value: 7 }), clinicalContent(original));
    const [stale] = await sink.deliver([third], never);
    expect(stale).toMatchObject({ kind: 'conflict' });
    const theirs = JSON.parse(stale?.kind === 'conflict' ? (stale.theirs ?? '{}') : '{}') as { value_text: string; supersedes: string };
    expect(theirs).toMatchObject({ value_text: '6.3', supersedes: clinicalContent(corrected) });

    const table = (await loaded(db)).get(key);
    expect(table).toMatchObject({ value_text: '6.3', value: 6.3, load_count: 3 });
    expect((await audited(db)).get(key)).toEqual(['inserted', 'corrected', 'absorbed', 'conflict']);
    const stored = await db.pool.query(`SELECT status, flags, unit, comparator FROM "${db.schema}".result_load WHERE dedup_key = $1`, [key]);
    expect(stored.rows[0]).toEqual({ status: 'correction', flags: ['H'], unit: 'mmol/L', comparator: null });
  });

  it('replaces the version central reported in a conflict (its `supersedes`), and only that one', async () => {
    const theirs = sampleResult(2, { valueText: '5.5', value: 5.5, flags: ['H', 'A'] });
    const ours = sampleResult(2);
    await sink.deliver([row(theirs)], never); // another gateway (or writer) loaded its version first
    const [conflict] = await sink.deliver([row(ours)], never);
    expect(conflict).toMatchObject({ kind: 'conflict' });
    const reported = JSON.parse(conflict?.kind === 'conflict' ? (conflict.theirs ?? '{}') : '{}') as { supersedes: string };
    expect(reported.supersedes).toBe(clinicalContent(theirs));
    // Without supersedes it stays a conflict however often it is sent.
    expect((await sink.deliver([row(ours)], never))[0]).toMatchObject({ kind: 'conflict' });
    expect(await sink.deliver([row(ours, reported.supersedes)], never)).toEqual([{ kind: 'delivered', detail: 'corrected' }]);
    expect((await loaded(db)).get(row(ours).dedupKey)).toMatchObject({ value_text: '4.1', value: 4.1 });
  });

  it('carries corrections beside ordinary rows of the same batch', async () => {
    const before = sampleResult(3);
    await sink.deliver([row(before)], never);
    const batch = [row(sampleResult(4)), row(sampleResult(3, { valueText: '3.9', value: 3.9 }), clinicalContent(before)), row(sampleResult(5))];
    // A correction of a key central never had is simply inserted.
    batch.push(row(sampleResult(6), clinicalContent(sampleResult(6, { valueText: '1.0', value: 1 }))));
    expect(detail(await sink.deliver(batch, never))).toEqual(['inserted', 'corrected', 'inserted', 'inserted']);
    expect((await loaded(db)).get(batch[1]!.dedupKey)).toMatchObject({ value_text: '3.9', load_count: 2 });
  });

  // Real server only (PGlite is one session): the row changes while the correction waits for its lock.
  it.runIf(inject('pgKind') === 'server').each([
    { end: 'COMMIT', outcome: { kind: 'conflict' }, stored: { value_text: '8.8', load_count: 1 } },
    { end: 'ROLLBACK', outcome: { kind: 'delivered', detail: 'corrected' }, stored: { value_text: '4.4', load_count: 2 } },
  ])('a correction that waited on another writer ($end) compares against what that writer left', async ({ end, outcome, stored }) => {
    const original = sampleResult(end === 'COMMIT' ? 7 : 8);
    await sink.deliver([row(original)], never);
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE "${db.schema}".result_load SET value_text = '8.8', value = 8.8 WHERE dedup_key = $1`, [row(original).dedupKey]);
      const racing = sink.deliver([row({ ...original, valueText: '4.4', value: 4.4 }, clinicalContent(original))], never);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await other.query(end);
      expect((await racing)[0]).toMatchObject(outcome);
      expect((await loaded(db)).get(row(original).dedupKey)).toMatchObject(stored);
    } finally {
      await other.end();
    }
  });
});
