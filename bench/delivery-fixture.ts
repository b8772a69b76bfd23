// What the delivery bench runs against: a PostgreSQL (a local server, else embedded PGlite, said in every line)
// with a fresh schema, and outbox rows shaped exactly as ingest writes them.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildPayload, sha256Hex, type ResultPayload } from '../src/payload.js';
import { clinicalDigest, type KeyedResult } from '../src/result.js';
import type { OutboxRow } from '../src/delivery/contract.js';
import { migrateCentral } from '../src/sinks/postgres-schema.js';
import { INSERT_RESULT } from '../src/store/ingest.js';
import { outboxIdOf } from '../src/store/layout.js';
import { resultColumns } from '../src/store/stored-result.js';
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
    bound: null,
    unit: 'mmol/L',
    status: 'final',
    statusCode: 'F',
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
    return {
      id: from + k + 1,
      sink,
      dedupKey: payload.dedupKey,
      recordId: payload.recordId,
      attempts: 0,
      etag: null,
      payload: json,
      payloadSha256: sha256Hex(json),
    };
  });
}

/** Writes `rows` as pending outbox rows, due at `dueAt`, each with its result (payload and all), as ingest does. */
export function fillOutbox(db: Database.Database, rows: readonly OutboxRow[], dueAt: number): void {
  const upsert = db.prepare(INSERT_RESULT);
  const insert = db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, attempts, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`);
  const chunk = db.transaction((part: readonly OutboxRow[]) => {
    for (const r of part) {
      const result = (JSON.parse(r.payload) as ResultPayload).result;
      const columns = resultColumns(result, r.dedupKey, r.recordId, clinicalDigest(result), dueAt, r.payload, r.payloadSha256);
      const { id } = upsert.get(columns) as { id: number };
      insert.run(outboxIdOf(id, 0), r.sink, r.dedupKey, dueAt, dueAt, dueAt);
    }
  });
  for (let i = 0; i < rows.length; i += 10_000) chunk(rows.slice(i, i + 10_000));
}

/** Writes `pending` outbox rows of one sink due one ms apart before now, each with a result carrying `template`'s payload. */
export function fillPending(db: Database.Database, pending: number, template: OutboxRow): void {
  const result = db.prepare(`INSERT INTO results (id, dedup_key, record_id, accession, analyte_loinc, instrument_id, resulted_at,
    value_text, status, flags, qc, source, analyzer_code, clinical_digest, capture_id, first_seen_at, last_seen_at, payload, payload_sha256)
    VALUES (?, ?, ?, 'A', '2823-3', 'chem-1', '2026-07-01T14:30:00+00:00', '4.1', 'final', '[]', 0, '{}', 'K', '', 1, ?, ?, ?, ?)`);
  const row = db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, attempts, next_attempt_at, created_at, updated_at)
    VALUES (?, 'postgres', ?, 'pending', 0, ?, ?, ?)`);
  const t0 = Date.now() - pending;
  const chunk = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const key = i.toString(16).padStart(64, '0');
      result.run(i + 1, key, template.recordId, t0, t0, template.payload, template.payloadSha256);
      row.run(outboxIdOf(i + 1, 0), key, t0 + i, t0, t0);
    }
  });
  for (let i = 0; i < pending; i += 50_000) chunk(i, Math.min(pending, i + 50_000));
}
