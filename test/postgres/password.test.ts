// sinks.postgres.passwordFile against a server that checks passwords (scram-sha-256): the URL names the user and no
// password, as the configuration requires, and the password must still reach the server. The cluster trusts
// 127.0.0.1 for everyone else, so each test's role is a member of labgate_password_auth, whose pg_hba entry
// (.ci/pg-password-auth.sh, run by .ci/run) demands the password. Real server only: PGlite checks no password.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPostgresSink } from '../../src/sinks/postgres.js';
import { poolConfig } from '../../src/sinks/postgres-connection.js';
import { sampleResult } from '../delivery/fixture.js';
import { outboxRow, testDatabase, type TestDatabase } from './pg.js';

const GROUP = 'labgate_password_auth';
const role = `lg_pw_${randomBytes(3).toString('hex')}`;
// Characters that URL encoding and libpq quoting get wrong when a password travels inside a connection string.
const password = `pw %41:@/?#&'"${randomBytes(6).toString('hex')}`;
const server = inject('pgKind') === 'server';
const ci = process.env.CI === 'true';
let db: TestDatabase;
let dir: string;
let passwordFile: string;
/** Why the password-checking server is missing, or null when it is there. */
let missing: string | null = null;

/** The test server's URL with `role` as the user and no password. */
function urlAs(user: string): string {
  const url = new URL(db.url);
  url.username = user;
  url.password = '';
  return url.toString();
}

async function connectError(config: pg.ClientConfig): Promise<string | null> {
  const client = new pg.Client(config);
  try {
    await client.connect();
    return null;
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

beforeAll(async () => {
  db = await testDatabase();
  dir = mkdtempSync(join(tmpdir(), 'labgate-pgpw-'));
  passwordFile = join(dir, 'pg-password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (!server) return void (missing = 'LABGATE_TEST_PG_URL is not set (embedded PGlite checks no password)');
  const group = await db.pool.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [GROUP]);
  if (group.rowCount === 0) return void (missing = `role ${GROUP} does not exist: run .ci/pg-password-auth.sh as root`);
  await db.pool.query(`CREATE ROLE "${role}" LOGIN PASSWORD '${password.replaceAll("'", "''")}' IN ROLE ${GROUP}`);
  await db.pool.query(`GRANT USAGE ON SCHEMA "${db.schema}" TO "${role}"; GRANT ALL ON ALL TABLES IN SCHEMA "${db.schema}" TO "${role}";
    GRANT ALL ON ALL SEQUENCES IN SCHEMA "${db.schema}" TO "${role}"`);
  // Without its password the role must be refused, or the server is not checking and this suite proves nothing.
  if ((await connectError({ connectionString: urlAs(role) })) === null)
    missing = `the server trusts ${role}: pg_hba.conf lacks the ${GROUP} entry (.ci/pg-password-auth.sh)`;
});
afterAll(async () => {
  if (server) await db.pool.query(`DROP OWNED BY "${role}"; DROP ROLE IF EXISTS "${role}"`).catch(() => {});
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sinks.postgres.passwordFile against a password-checking PostgreSQL', () => {
  it('is set up: a server that refuses the role without its password (CI fails here when it is missing)', (ctx) => {
    if (missing !== null && !ci) ctx.skip(missing);
    expect(missing).toBeNull();
  });

  it('authenticates with the password from the file when the URL names the user without one', async (ctx) => {
    if (missing !== null) return ci ? expect(missing).toBeNull() : ctx.skip(missing);
    const url = new URL(db.url);
    const fields = { host: url.hostname, port: Number(url.port), database: url.pathname.slice(1), user: role };
    expect(await connectError({ ...fields, password: 'wrong' })).toBe('28P01');
    expect(await connectError({ ...fields, password })).toBeNull();
    const pool = new pg.Pool(poolConfig({ url: urlAs(role), passwordFile, poolSize: 1 }));
    try {
      expect((await pool.query('SELECT current_user AS who')).rows[0]).toEqual({ who: role });
    } finally {
      await pool.end();
    }
  });

  it('loads a result through the sink as that role', async (ctx) => {
    if (missing !== null) return ci ? expect(missing).toBeNull() : ctx.skip(missing);
    const sink = createPostgresSink({ url: urlAs(role), passwordFile, poolSize: 1, schema: db.schema, gatewayId: 'gw-test' });
    try {
      const outcomes = await sink.deliver([outboxRow(1, sampleResult(1))], new AbortController().signal);
      expect(outcomes).toMatchObject([{ kind: 'delivered' }]);
    } finally {
      await sink.close();
    }
  });
});
