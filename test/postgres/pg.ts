// Test access to PostgreSQL: a fresh schema per test file under the run's prefix, migrated, and one small pool.
// Against PGlite only one connection exists at a time, so a test file uses one pool of size 1 for everything.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { buildPayload, sha256Hex } from '../../src/payload.js';
import type { KeyedResult } from '../../src/result.js';
import { migrateCentral } from '../../src/sinks/postgres-schema.js';
import type { OutboxRow } from '../../src/delivery/contract.js';

/** A migrated schema of its own and a pool to reach it. */
export interface TestDatabase {
  url: string;
  schema: string;
  pool: pg.Pool;
  /** Drops the schema and ends the pool. */
  close(): Promise<void>;
}

/** Creates and migrates a new schema for one test file. */
export async function testDatabase(): Promise<TestDatabase> {
  const url = inject('pgUrl');
  const schema = `${inject('pgSchemaPrefix')}_${randomBytes(3).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 200 });
  pool.on('error', () => {});
  const client = await pool.connect();
  try {
    await migrateCentral(client, schema);
  } finally {
    client.release();
  }
  return {
    url,
    schema,
    pool,
    close: async () => {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    },
  };
}

/** result_load rows by key. */
export async function loaded(db: TestDatabase): Promise<Map<string, { load_count: number; value_text: string; value: number | null }>> {
  const res = await db.pool.query(`SELECT dedup_key, load_count, value_text, value FROM "${db.schema}".result_load`);
  return new Map(res.rows.map((r: { dedup_key: string; load_count: number; value_text: string; value: number | null }) => [r.dedup_key, r]));
}

/** Audit outcomes per key, in order. */
export async function audited(db: TestDatabase): Promise<Map<string, string[]>> {
  const res = await db.pool.query(`SELECT dedup_key, outcome FROM "${db.schema}".result_load_audit ORDER BY id`);
  const out = new Map<string, string[]>();
  for (const r of res.rows as { dedup_key: string; outcome: string }[]) out.set(r.dedup_key, [...(out.get(r.dedup_key) ?? []), r.outcome]);
  return out;
}

/** An outbox row as the store hands it to the sink (no SQLite needed); `supersedes` set as on a person's forward. */
export function outboxRow(id: number, result: KeyedResult, supersedes?: string): OutboxRow {
  const payload = {
    ...buildPayload(result, { receivedAt: Date.UTC(2026, 6, 1, 14, 31), rawSha256: 'f'.repeat(64) }),
    ...(supersedes === undefined ? {} : { supersedes }),
  };
  const text = JSON.stringify(payload);
  return {
    id,
    sink: 'postgres',
    dedupKey: payload.dedupKey,
    recordId: payload.recordId,
    attempts: 0,
    etag: null,
    payload: text,
    payloadSha256: sha256Hex(text),
  };
}
