// `labgate pg-migrate` against the real server: creates the schema, is idempotent, and the printed script applies cleanly.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, expect, inject, it } from 'vitest';
import { main } from '../../src/cli.js';
import { centralMigrations, migrateCentral, migrationScript } from '../../src/sinks/postgres-schema.js';
import { batchParams, batchStatement } from '../../src/sinks/postgres-statement.js';
import { potassium } from '../fixtures/results.js';
import { outboxRow } from './pg.js';

const dir = mkdtempSync(join(tmpdir(), 'labgate-migrate-'));
const schema = `${inject('pgSchemaPrefix')}_migrate`;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function migrate(): Promise<string> {
  const config = join(dir, 'labgate.yaml');
  writeFileSync(config, `gateway:\n  id: gw-1\n  dataDir: ${dir}\nsinks:\n  postgres:\n    url: ${inject('pgUrl')}\n    schema: ${schema}\n`);
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await main(['pg-migrate', '--config', config], { stdout, stderr: process.stderr, stdin: Readable.from([]), env: {} });
  expect(code).toBe(0);
  return out;
}

it('creates the central schema once and then reports it current; the printed script re-applies cleanly', async () => {
  expect(await migrate()).toBe(`central schema ${schema}: version 0 → 3\n`);
  expect(await migrate()).toBe(`central schema ${schema} is at version 3\n`);
  const client = new pg.Client({ connectionString: inject('pgUrl') });
  await client.connect();
  try {
    await client.query(migrationScript(schema));
    const cols = await client.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'result_load'`, [schema]);
    expect(cols.rows.map((r: { column_name: string }) => r.column_name)).toEqual(
      expect.arrayContaining(['dedup_key', 'load_count', 'value_text', 'last_loaded_at']),
    );
    await expect(client.query(`UPDATE "${schema}".result_load_audit SET outcome = 'inserted'`)).resolves.toBeDefined(); // no rows: no trigger
    await client.query(`INSERT INTO "${schema}".result_load_audit (dedup_key, outcome, gateway_id, attempt) VALUES ($1, 'inserted', 'gw', 1)`, [
      'a'.repeat(64),
    ]);
    await client.query(`INSERT INTO "${schema}".result_load_audit (dedup_key, outcome, gateway_id, attempt) VALUES ($1, 'corrected', 'gw', 2)`, [
      'a'.repeat(64),
    ]);
    await expect(
      client.query(`INSERT INTO "${schema}".result_load_audit (dedup_key, outcome, gateway_id, attempt) VALUES ($1, 'overwritten', 'gw', 3)`, ['a'.repeat(64)]),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(client.query(`DELETE FROM "${schema}".result_load_audit`)).rejects.toThrow(/append-only/);
  } finally {
    await client.end();
  }
});

it('upgrades a version 1 schema that already holds audit rows', async () => {
  const old = `${schema}_v1`;
  const client = new pg.Client({ connectionString: inject('pgUrl') });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA "${old}"`);
    await client.query(`CREATE TABLE "${old}".labgate_schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      applied_by TEXT NOT NULL DEFAULT current_user)`);
    await client.query(centralMigrations(old)[0]!);
    await client.query(`INSERT INTO "${old}".labgate_schema_version (version) VALUES (1)`);
    await client.query(`INSERT INTO "${old}".result_load_audit (dedup_key, outcome, gateway_id, attempt) VALUES ($1, 'conflict', 'gw', 1)`, ['b'.repeat(64)]);
    expect(await migrateCentral(client, old)).toEqual({ from: 1, to: 3 });
    await client.query(`INSERT INTO "${old}".result_load_audit (dedup_key, outcome, gateway_id, attempt) VALUES ($1, 'corrected', 'gw', 2)`, ['b'.repeat(64)]);
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`).catch(() => {});
    await client.end();
  }
});

it('upgrades a version 2 result_load in place: censored values lose their number, replays stay replays', async () => {
  const old = `${schema}_v2`;
  const client = new pg.Client({ connectionString: inject('pgUrl') });
  await client.connect();
  const key = (n: number): string => String(n).repeat(64);
  try {
    await client.query(`CREATE SCHEMA "${old}"`);
    await client.query(`CREATE TABLE "${old}".labgate_schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      applied_by TEXT NOT NULL DEFAULT current_user)`);
    for (const [i, sql] of centralMigrations(old).slice(0, 2).entries()) {
      await client.query(sql);
      await client.query(`INSERT INTO "${old}".labgate_schema_version (version) VALUES ($1)`, [i + 1]);
    }
    // What version 2 loaded: `<0.5` with value 0.5, an exact value, and a row from a loader before labgate (no value_text).
    const censored = potassium('PG1', { valueText: '<0.5', value: null, comparator: '<', bound: 0.5 });
    const fromV2 = outboxRow(1, censored);
    await client.query(
      `INSERT INTO "${old}".result_load (dedup_key, value, value_text, comparator, unit, status, flags)
      VALUES ($1, 0.5, '<0.5', '<', 'mmol/L', 'final', '[]'), ($2, 4.1, '4.1', NULL, 'mmol/L', 'final', '[]'), ($3, 7, NULL, NULL, 'g/L', NULL, NULL)`,
      [fromV2.dedupKey, key(2), key(3)],
    );
    expect(await migrateCentral(client, old)).toEqual({ from: 2, to: 3 });
    const rows = await client.query(`SELECT dedup_key, value, comparator, bound, status_code FROM "${old}".result_load ORDER BY value_text NULLS LAST`);
    expect(rows.rows.map((r: Record<string, unknown>) => [r.value, r.comparator, r.bound, r.status_code])).toEqual([
      [4.1, null, null, null],
      [null, '<', 0.5, null],
      [7, null, null, null],
    ]);
    // The printed script is safe to apply again on the upgraded schema.
    await client.query(migrationScript(old));
    // Today's payload of the same result is a replay of the upgraded row, not a conflict.
    const load = await client.query(batchStatement(old), batchParams([{ key: fromV2.dedupKey, payload: fromV2.payload, attempt: 1 }], 'gw-test'));
    expect(load.rows).toEqual([{ dedup_key: fromV2.dedupKey, inserted: false, corrected: false, conflict: false }]);
    const replayed = await client.query(`SELECT load_count, value, bound FROM "${old}".result_load WHERE dedup_key = $1`, [fromV2.dedupKey]);
    expect(replayed.rows[0]).toEqual({ load_count: 2, value: null, bound: 0.5 });
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`).catch(() => {});
    await client.end();
  }
});
