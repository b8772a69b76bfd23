// The least-privilege loader role (loaderGrants, documented in src/sinks/POSTGRES.md) is enough to load, absorb,
// report conflicts and apply a forwarded correction, and not enough to change a result's identity, delete one or
// touch the audit trail. A role granted before corrections existed keeps loading; only its corrections wait.
// Real server only: PGlite is a single superuser session.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { clinicalContent } from '../../src/result.js';
import { sha256Hex } from '../../src/payload.js';
import { createPostgresSink } from '../../src/sinks/postgres.js';
import { loaderGrants } from '../../src/sinks/postgres-schema.js';
import type { OutboxRow } from '../../src/delivery/contract.js';
import { sampleResult } from '../delivery/fixture.js';
import { outboxRow, testDatabase, type TestDatabase } from './pg.js';

const role = `lg_loader_${randomBytes(3).toString('hex')}`;
const older = `lg_loader_v1_${randomBytes(3).toString('hex')}`;
let db: TestDatabase;
const server = inject('pgKind') === 'server';
const never = new AbortController().signal;

beforeAll(async () => {
  db = await testDatabase();
  if (!server) return;
  await db.pool.query(`CREATE ROLE "${role}" NOLOGIN; CREATE ROLE "${older}" NOLOGIN`);
  await db.pool.query(loaderGrants(db.schema, role));
  // The grants as they were before forwarded corrections: UPDATE of the replay counters only.
  await db.pool.query(loaderGrants(db.schema, older));
  await db.pool.query(`REVOKE UPDATE ON "${db.schema}".result_load FROM "${older}";
    GRANT UPDATE (load_count, last_loaded_at) ON "${db.schema}".result_load TO "${older}"`);
});
afterAll(async () => {
  if (server) await db.pool.query(`DROP OWNED BY "${role}", "${older}"; DROP ROLE "${role}"; DROP ROLE "${older}"`);
  await db.close();
});

function poolAs(name: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  pool.on('connect', (client) => void client.query(`SET ROLE "${name}"`));
  return pool;
}

function rowOf(i: number): OutboxRow {
  return outboxRow(i, sampleResult(i));
}

/** Result `i` with another value, forwarded by a person as a correction of the original. */
function correctionOf(i: number): OutboxRow {
  return outboxRow(100 + i, sampleResult(i, { valueText: '9.9', value: 9.9 }), clinicalContent(sampleResult(i)));
}

it.runIf(server)('loads, absorbs, reports conflicts and applies a forwarded correction as the loader role, and can change nothing else', async () => {
  const pool = poolAs(role);
  const sink = createPostgresSink({ url: db.url, schema: db.schema, poolSize: 1, gatewayId: 'gw' }, { pool });
  const row = rowOf(1);
  try {
    expect(await sink.deliver([row], never)).toEqual([{ kind: 'delivered', detail: 'inserted' }]);
    expect(await sink.deliver([row], never)).toEqual([{ kind: 'delivered', detail: 'absorbed' }]);
    const changedPayload = row.payload.replace('"valueText":"4.1","value":4.1', '"valueText":"9.9","value":9.9');
    // A version the store really wrote: its digest matches (a row whose digest does not is a dead letter, never sent).
    const changed = { ...row, payload: changedPayload, payloadSha256: sha256Hex(changedPayload) };
    expect(await sink.deliver([changed], never)).toEqual([
      expect.objectContaining({ kind: 'conflict', theirs: expect.stringContaining('"value_text":"4.1"') }),
    ]);
    expect(await sink.deliver([correctionOf(1)], never)).toEqual([{ kind: 'delivered', detail: 'corrected' }]);
    for (const column of ['dedup_key', 'accession', 'analyte_loinc', 'instrument_id', 'resulted_at', 'record_id', 'first_loaded_at']) {
      await expect(pool.query(`UPDATE "${db.schema}".result_load SET ${column} = ${column}`)).rejects.toMatchObject({ code: '42501' });
    }
    await expect(pool.query(`DELETE FROM "${db.schema}".result_load`)).rejects.toMatchObject({ code: '42501' });
    await expect(pool.query(`DELETE FROM "${db.schema}".result_load_audit`)).rejects.toMatchObject({ code: '42501' });
    await expect(pool.query(`UPDATE "${db.schema}".result_load_audit SET outcome = 'absorbed'`)).rejects.toMatchObject({ code: '42501' });
    await expect(pool.query(`SELECT accession FROM "${db.schema}".result_load`)).rejects.toMatchObject({ code: '42501' });
  } finally {
    await pool.end();
  }
});

it.runIf(server)('a role granted before corrections existed keeps loading; its corrections wait as record retries', async () => {
  const pool = poolAs(older);
  const sink = createPostgresSink({ url: db.url, schema: db.schema, poolSize: 1, gatewayId: 'gw' }, { pool });
  const first = rowOf(2);
  try {
    expect(await sink.deliver([first], never)).toEqual([{ kind: 'delivered', detail: 'inserted' }]);
    const outcomes = await sink.deliver([rowOf(3), correctionOf(2), rowOf(4)], never);
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'retry', 'delivered']);
    expect(outcomes[1]).toMatchObject({ scope: 'record', reason: expect.stringMatching(/^42501.*grant the loader role/) });
  } finally {
    await pool.end();
  }
});
