// The least-privilege loader role (loaderGrants, documented in src/sinks/POSTGRES.md) is enough to load, absorb
// and report conflicts, and not enough to overwrite a result or touch the audit trail. Real server only: PGlite
// is a single superuser session.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createPostgresSink } from '../../src/sinks/postgres.js';
import { loaderGrants } from '../../src/sinks/postgres-schema.js';
import { enqueue, sampleResult, testStore, type TestStore } from '../delivery/fixture.js';
import { testDatabase, type TestDatabase } from './pg.js';

const role = `lg_loader_${randomBytes(3).toString('hex')}`;
let db: TestDatabase;
let store: TestStore;
const server = inject('pgKind') === 'server';

beforeAll(async () => {
  db = await testDatabase();
  store = testStore();
  if (!server) return;
  await db.pool.query(`CREATE ROLE "${role}" NOLOGIN`);
  await db.pool.query(loaderGrants(db.schema, role));
});
afterAll(async () => {
  store.close();
  if (server) await db.pool.query(`DROP OWNED BY "${role}"; DROP ROLE "${role}"`);
  await db.close();
});

it.runIf(server)('loads, absorbs and reports conflicts as the loader role, and can change nothing else', async () => {
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  pool.on('connect', (client) => void client.query(`SET ROLE "${role}"`));
  const sink = createPostgresSink({ url: db.url, schema: db.schema, poolSize: 1, gatewayId: 'gw' }, { pool });
  enqueue(store.db, 'postgres', [sampleResult(1)], store.clock.now);
  const [row] = store.outbox.claimDue('postgres', 1);
  const never = new AbortController().signal;
  try {
    expect(await sink.deliver([row!], never)).toEqual([{ kind: 'delivered', detail: 'inserted' }]);
    expect(await sink.deliver([row!], never)).toEqual([{ kind: 'delivered', detail: 'absorbed' }]);
    const changed = { ...row!, payload: row!.payload.replace('"valueText":"4.1","value":4.1', '"valueText":"9.9","value":9.9') };
    expect(await sink.deliver([changed], never)).toEqual([expect.objectContaining({ kind: 'conflict', theirs: expect.stringContaining('"value_text":"4.1"') })]);
    await expect(pool.query(`UPDATE "${db.schema}".result_load SET value = 1`)).rejects.toMatchObject({ code: '42501' });
    await expect(pool.query(`DELETE FROM "${db.schema}".result_load_audit`)).rejects.toMatchObject({ code: '42501' });
    await expect(pool.query(`SELECT accession FROM "${db.schema}".result_load`)).rejects.toMatchObject({ code: '42501' });
  } finally {
    await pool.end();
  }
});
