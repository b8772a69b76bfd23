// What the delivery bench runs against: a PostgreSQL (a local server, else embedded PGlite, said in every line)
// with a fresh schema, and outbox rows shaped exactly as ingest writes them.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildPayload, sha256Hex } from '../src/payload.js';
import type { KeyedResult } from '../src/result.js';
import type { OutboxRow } from '../src/sinks/sink.js';
import { migrateCentral } from '../src/sinks/postgres-schema.js';
import type Database from 'better-sqlite3';

/** A reachable PostgreSQL with a schema of the bench's own. */
export interface BenchDatabase {
  url: string;
  schema: string;
  /** 'postgres <version>' or 'pglite (no server reachable at ...)'. */
  server: string;
  /** Connections the server takes at once (PGlite: 1). */
  maxConnections: number;
  truncate(): Promise<void>;
  close(): Promise<void>;
}

/** Finds a server (LABGATE_BENCH_PG_URL, LABGATE_TEST_PG_URL, the local default) or starts PGlite. */
export async function benchDatabase(env: NodeJS.ProcessEnv): Promise<BenchDatabase> {
  const wanted = env.LABGATE_BENCH_PG_URL ?? env.LABGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `lg_bench_${randomBytes(3).toString('hex')}`;
  let url = wanted;
  let server: string;
  let stopEmbedded = async (): Promise<void> => {};
  let maxConnections = 4;
  try {
    server = await withClient(wanted, async (c) => `postgres ${(await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v}`);
  } catch {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const db = await PGlite.create();
    const socket = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
    await socket.start();
    url = `postgres://postgres@${socket.getServerConn()}/postgres`;
    server = `pglite (no server reachable at ${new URL(wanted).host})`;
    maxConnections = 1;
    stopEmbedded = async () => {
      await socket.stop();
      await db.close();
    };
  }
  await withClient(url, (c) => migrateCentral(c, schema));
  const s = `"${schema}"`;
  return {
    url,
    schema,
    server,
    maxConnections,
    truncate: () => withClient(url, (c) => c.query(`TRUNCATE ${s}.result_load, ${s}.result_load_audit`)).then(() => {}),
    close: async () => {
      await withClient(url, (c) => c.query(`DROP SCHEMA ${s} CASCADE`)).catch(() => {});
      await stopEmbedded();
    },
  };
}

/** Runs `fn` on a fresh connection and closes it. */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, options: '-c jit=off' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A realistic potassium result; `i` makes the key unique. */
export function benchResult(i: number): KeyedResult {
  return {
    accession: `B${String(i).padStart(9, '0')}`,
    analyteLoinc: '2823-3',
    instrumentId: 'chem-1',
    resultedAt: '2026-07-01T14:30:00+00:00',
    valueText: '4.1',
    value: 4.1,
    comparator: null,
    unit: 'mmol/L',
    status: 'final',
    flags: ['N'],
    referenceRange: '3.5-5.1',
    qc: false,
    source: { gatewayId: 'gw-bench', driver: 'astm', analyzerCode: 'K', captureId: 1 + Math.floor(i / 20) },
  };
}

/** Outbox rows for results [from, from + n), as a sink receives them. */
export function benchRows(from: number, n: number, sink = 'postgres'): OutboxRow[] {
  return Array.from({ length: n }, (_, k) => {
    const payload = buildPayload(benchResult(from + k), { receivedAt: Date.UTC(2026, 6, 1, 14, 30), rawSha256: 'f'.repeat(64) });
    const json = JSON.stringify(payload);
    return { id: from + k + 1, sink, dedupKey: payload.dedupKey, recordId: payload.recordId, attempts: 0, etag: null, payload: json, payloadSha256: sha256Hex(json) };
  });
}

/** Writes `rows` as pending outbox rows, due at `dueAt`, in chunks of one transaction each. */
export function fillOutbox(db: Database.Database, rows: readonly OutboxRow[], dueAt: number): void {
  const insert = db.prepare(`INSERT INTO outbox (sink, dedup_key, state, attempts, next_attempt_at, payload, payload_sha256,
    created_at, updated_at) VALUES (?, ?, 'pending', 0, ?, ?, ?, ?, ?)`);
  const chunk = db.transaction((part: readonly OutboxRow[]) => {
    for (const r of part) insert.run(r.sink, r.dedupKey, dueAt, r.payload, r.payloadSha256, dueAt, dueAt);
  });
  for (let i = 0; i < rows.length; i += 10_000) chunk(rows.slice(i, i + 10_000));
}
