// The PostgreSQL sink against a real server (CI) or embedded PGlite: replay absorbed, conflict reported and not
// written, a poison row isolated, the schema migration idempotent.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sha256Hex } from '../../src/payload.js';
import type { OutboxRow } from '../../src/delivery/contract.js';
import { createPostgresSink, type PostgresSink } from '../../src/sinks/postgres.js';
import { migrateCentral } from '../../src/sinks/postgres-schema.js';
import { enqueue, sampleResult, testStore, type TestStore } from '../delivery/fixture.js';
import { audited, loaded, testDatabase, type TestDatabase } from './pg.js';
import { resultIdOf } from '../../src/store/layout.js';

let db: TestDatabase;
let store: TestStore;
let sink: PostgresSink;
const never = new AbortController().signal;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore();
  sink = createPostgresSink({ url: db.url, schema: db.schema, poolSize: 1, gatewayId: 'gw-test' }, { pool: db.pool });
});
afterAll(async () => {
  store.close();
  await db.close();
});

function rows(results: Parameters<typeof enqueue>[2]): OutboxRow[] {
  enqueue(store.db, 'postgres', results, store.clock.now);
  return store.outbox.claimDue('postgres', 10_000);
}

describe('postgres sink', () => {
  it('loads a batch once; delivering it again only counts the replay', async () => {
    const batch = rows([1, 2, 3].map((i) => sampleResult(i)));
    const first = await sink.deliver(batch, never);
    expect(first.map((o) => o.kind === 'delivered' && o.detail)).toEqual(['inserted', 'inserted', 'inserted']);
    const again = await sink.deliver(batch, never);
    expect(again.map((o) => o.kind === 'delivered' && o.detail)).toEqual(['absorbed', 'absorbed', 'absorbed']);
    const table = await loaded(db);
    const audit = await audited(db);
    for (const row of batch) {
      expect(table.get(row.dedupKey)).toMatchObject({ load_count: 2, value_text: '4.1', value: 4.1 });
      expect(audit.get(row.dedupKey)).toEqual(['inserted', 'absorbed']);
    }
  });

  it('loads text beyond ASCII byte for byte: units, comments and reference ranges in any script', async () => {
    const texts = [
      { unit: 'µmol/L', valueText: '≥ 5.0', referenceRange: '3,5–5,1' },
      { unit: '10⁹/L', valueText: 'Nováček ✓', referenceRange: 'ženy: 0–10' },
      { unit: 'mmol/L', valueText: 'Ş "quoted" \\ back\u0001slash', referenceRange: '日本語' },
    ];
    const batch = rows(texts.map((t, i) => sampleResult(60 + i, t)));
    expect((await sink.deliver(batch, never)).map((o) => o.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    const res = await db.pool.query(`SELECT unit, value_text, reference_range FROM "${db.schema}".result_load WHERE dedup_key = ANY($1) ORDER BY accession`, [
      batch.map((r) => r.dedupKey),
    ]);
    expect(res.rows).toEqual(texts.map((t) => ({ unit: t.unit, value_text: t.valueText, reference_range: t.referenceRange })));
  });

  it('reports different clinical content under a stored key as a conflict and writes nothing', async () => {
    const [original] = rows([sampleResult(10)]);
    await sink.deliver([original!], never);
    store.outbox.release('postgres', [original!]);
    store.db.prepare('DELETE FROM outbox WHERE id = ?').run(original!.id);
    store.db.prepare('DELETE FROM results WHERE id = ?').run(resultIdOf(original!.id)); // the payload is the result's
    const [changed] = rows([sampleResult(10, { valueText: '6.3', value: 6.3, flags: ['H'] })]);
    const [outcome] = await sink.deliver([changed!], never);
    expect(outcome).toMatchObject({ kind: 'conflict' });
    expect(outcome?.kind === 'conflict' && JSON.parse(outcome.theirs ?? '{}')).toMatchObject({ value_text: '4.1', load_count: 1 });
    expect((await loaded(db)).get(original!.dedupKey)).toMatchObject({ load_count: 1, value_text: '4.1' });
    expect((await audited(db)).get(original!.dedupKey)).toEqual(['inserted', 'conflict']);
  });

  it('isolates poison rows by bisecting: only they are dead, the rest is loaded', async () => {
    const results = [20, 21, 22, 23, 24, 25, 26].map((i) => sampleResult(i));
    results[4] = sampleResult(24, { resultedAt: '2026-02-30T00:00:00+00:00' }); // 22008: no such day
    const batch = rows(results);
    // 22P02: a value the server cannot read as a number (a payload the store wrote, so it passes the sink's own checks).
    const unreadable = JSON.stringify({ ...JSON.parse(batch[1]!.payload), result: { ...JSON.parse(batch[1]!.payload).result, value: 'four' } });
    batch[1] = { ...batch[1]!, payload: unreadable, payloadSha256: sha256Hex(unreadable) };
    const outcomes = await sink.deliver(batch, never);
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'dead', 'delivered', 'delivered', 'dead', 'delivered', 'delivered']);
    expect(outcomes[1]).toMatchObject({ kind: 'dead', reason: expect.stringMatching(/^22P02/) });
    expect(outcomes[4]).toMatchObject({ kind: 'dead', reason: expect.stringMatching(/^22008/) });
    const table = await loaded(db);
    expect(batch.filter((r) => table.has(r.dedupKey))).toHaveLength(5);
  });

  it('a payload corrupted at rest, or one that is no result payload, is a dead letter and never loaded', async () => {
    const batch = rows([sampleResult(40), sampleResult(41), sampleResult(42)]);
    batch[0] = { ...batch[0]!, payload: batch[0]!.payload.replace('4.1', '4.7') };
    batch[1] = { ...batch[1]!, payload: '{"x":1}', payloadSha256: sha256Hex('{"x":1}') };
    const outcomes = await sink.deliver(batch, never);
    expect(outcomes).toEqual([
      { kind: 'dead', reason: 'payload corrupted at rest' },
      { kind: 'dead', reason: 'payload is not a result payload' },
      expect.objectContaining({ kind: 'delivered' }),
    ]);
    const table = await loaded(db);
    expect(batch.map((r) => table.has(r.dedupKey))).toEqual([false, false, true]);
  });

  it('reports the sink unreachable (a pause, never a dead letter) when no connection can be made', async () => {
    const dead = createPostgresSink({ url: 'postgres://postgres@127.0.0.1:1/none', schema: db.schema, poolSize: 1, gatewayId: 'gw', connectTimeoutMs: 2_000 });
    const batch = rows([sampleResult(30), sampleResult(31)]);
    const outcomes = await dead.deliver(batch, never);
    await dead.close();
    expect(outcomes).toEqual([
      expect.objectContaining({ kind: 'retry', scope: 'unreachable' }),
      expect.objectContaining({ kind: 'retry', scope: 'unreachable' }),
    ]);
  });

  it('runs its own sessions with jit off', async () => {
    const own = createPostgresSink({ url: db.url, schema: db.schema, poolSize: 1, gatewayId: 'gw', idleTimeoutMs: 100 });
    const jit = await own.pool.query<{ jit: string }>('SHOW jit');
    await own.close();
    // PGlite has no JIT and ignores startup options; the real server must honor them.
    if (inject('pgKind') === 'server') expect(jit.rows[0]?.jit).toBe('off');
  });

  it('migrates idempotently', async () => {
    const client = await db.pool.connect();
    try {
      expect(await migrateCentral(client, db.schema)).toEqual({ from: 3, to: 3 });
    } finally {
      client.release();
    }
  });
});
