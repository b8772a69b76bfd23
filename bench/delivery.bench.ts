// Delivery to PostgreSQL: the drain's throughput over 100,000 pending rows beside the raw ceiling (the very same
// upsert+audit statement, same rows, same batch size and concurrency, sent straight from here with no outbox) and
// the row-at-a-time peer (one upsert, one round trip, one commit per result). Then the claim's cost at 10,000 and
// 1,000,000 pending rows: the partial index must keep it flat.
// Knobs: LABGATE_BENCH_PG_URL (else LABGATE_TEST_PG_URL, else the local default, else PGlite), LABGATE_BENCH_INFLIGHT
// (batches in flight for both the drain and the ceiling, default 2 as configured), LABGATE_BENCH_ROWS.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Drain } from '../src/delivery/drain.js';
import { systemClock } from '../src/clock.js';
import { createPostgresSink } from '../src/sinks/postgres.js';
import { batchParams, batchStatement } from '../src/sinks/postgres-statement.js';
import type { OutboxRow } from '../src/delivery/contract.js';
import { OutcomeMarks } from '../src/delivery/outcome-marks.js';
import { openDatabase } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';
import { openStore } from '../src/store/store.js';
import { benchDatabase, benchRows, fillOutbox, fillPending, withClient, type BenchDatabase } from './delivery-fixture.js';
import { sig, type BenchLine, type Wants } from './line.js';

const ROWS = Number(process.env.LABGATE_BENCH_ROWS ?? 100_000);
const PEER_ROWS = 5_000;
const BATCH = 500;
const ROUNDS = 5;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['delivery.postgres.drain', 'delivery.postgres.raw-ceiling', 'delivery.postgres.row-at-a-time', 'delivery.claim'];

/** Runs the delivery benchmarks. */
export async function run(emit: (line: BenchLine) => void, wants: Wants = () => true): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-delivery-'));
  try {
    if (figures.slice(0, 3).some(wants)) await drainFigures(emit, dir);
    if (wants('delivery.claim')) claimFigure(emit, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The drain beside its raw ceiling and the row-at-a-time peer, measured in the same run.
async function drainFigures(emit: (line: BenchLine) => void, dir: string): Promise<void> {
  const pgdb = await benchDatabase(process.env);
  try {
    const inFlight = Math.min(Number(process.env.LABGATE_BENCH_INFLIGHT ?? 2), pgdb.maxConnections);
    const rows = benchRows(0, ROWS);
    // Alternated, best of ROUNDS each, so that a noisy neighbour on the machine does not decide the ratio.
    let ceiling = 0;
    let drain = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Each goes first in turn: whichever follows a 100,000-row load meets the server's checkpoint and autovacuum.
      const measureCeiling = async (): Promise<void> => {
        ceiling = Math.max(ceiling, await rawCeiling(pgdb, rows, inFlight));
        await pgdb.truncate();
      };
      const measureDrain = async (): Promise<void> => {
        drain = Math.max(drain, await drainRate(pgdb, rows, inFlight, join(dir, `drain-${round}`)));
        await pgdb.truncate();
      };
      if (round % 2 === 0) await measureCeiling().then(measureDrain);
      else await measureDrain().then(measureCeiling);
    }
    const peer = await rowAtATime(pgdb, benchRows(ROWS, PEER_ROWS));
    const context = { rows: ROWS, batchSize: BATCH, inFlight, rounds: ROUNDS, server: pgdb.server };
    emit({ bench: 'delivery.postgres.raw-ceiling', value: sig(ceiling), unit: 'results/s', ...context });
    emit({ bench: 'delivery.postgres.row-at-a-time', value: sig(peer), unit: 'results/s', rows: PEER_ROWS, server: pgdb.server });
    emit({
      bench: 'delivery.postgres.drain',
      value: sig(drain),
      unit: 'results/s',
      ceiling: sig(ceiling),
      ratioToCeiling: sig(drain / ceiling),
      targetRatio: 0.7,
      peer: sig(peer),
      ratioToPeer: sig(drain / peer),
      targetPeerRatio: 10,
      ...context,
    });
  } finally {
    await pgdb.close();
  }
}

// The claim's cost at 10,000 and at 1,000,000 pending rows.
function claimFigure(emit: (line: BenchLine) => void, dir: string): void {
  const small = claimCost(join(dir, 'claim-10k'), 10_000);
  const large = claimCost(join(dir, 'claim-1m'), 1_000_000);
  emit({
    bench: 'delivery.claim',
    value: sig(large),
    unit: 'µs per claim of 500',
    pending: 1_000_000,
    at10k: sig(small),
    ratio: sig(large / small),
    targetRatio: 2,
  });
}

// The same statement the sink sends, with the same batches and as many in flight as the drain keeps.
async function rawCeiling(db: BenchDatabase, rows: readonly OutboxRow[], inFlight: number): Promise<number> {
  const pool = new pg.Pool({ connectionString: db.url, max: inFlight, options: '-c jit=off' });
  const sql = batchStatement(db.schema);
  // Building a batch's parameters from its payloads is part of sending it, for the ceiling as for the sink.
  const params = (part: readonly OutboxRow[]): unknown[] =>
    batchParams(
      part.map((r) => ({ key: r.dedupKey, payload: r.payload, attempt: 1 })),
      'gw-bench',
    );
  const batches = chunks(rows, BATCH);
  await pool.query(sql, params(batches[0]!)); // warm the connections and the plan, as a running drain is
  await db.truncate();
  const start = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < batches.length) await pool.query(sql, params(batches[next++]!));
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - start) / 1000;
  await pool.end();
  return rows.length / seconds;
}

// The drain as the gateway composes it (gateway/delivery-part.ts): over the store, whose checkpoints run on their own
// thread, with the outcome marks of its batches written together.
async function drainRate(db: BenchDatabase, rows: readonly OutboxRow[], inFlight: number, dataDir: string): Promise<number> {
  const store = openStore({ dataDir, sinks: ['postgres'], now: Date.now });
  fillOutbox(store.db, rows, Date.now() - 1_000);
  store.db.pragma('wal_checkpoint(TRUNCATE)'); // the fill's pages are not the drain's to write
  const outbox = new OutcomeMarks(store.outbox, systemClock);
  const sink = createPostgresSink({ url: db.url, schema: db.schema, poolSize: inFlight, gatewayId: 'gw-bench' });
  await sink.pool.query('SELECT 1'); // connect before the clock starts, as a running gateway has
  const policy = { backoff: { baseMs: 1_000, capMs: 300_000 }, probeIntervalMs: 15_000, failureThreshold: 5, batchSize: BATCH, inFlight };
  const drain = new Drain({ sink, outbox, policy, clock: systemClock, random: Math.random });
  const start = performance.now();
  drain.start();
  while (drain.status().delivered < rows.length) {
    if (drain.status().circuit !== 'closed') throw new Error(`drain paused: ${drain.status().lastError}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const seconds = (performance.now() - start) / 1000;
  await drain.stop();
  await sink.close();
  store.close();
  return rows.length / seconds;
}

// What a naive loader does: one autocommitted upsert per result.
async function rowAtATime(db: BenchDatabase, rows: readonly OutboxRow[]): Promise<number> {
  const sql = `INSERT INTO "${db.schema}".result_load AS r (dedup_key, accession, analyte_loinc, instrument_id, resulted_at, value, unit, value_text)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (dedup_key) DO UPDATE SET load_count = r.load_count + 1`;
  return withClient(db.url, async (client) => {
    const start = performance.now();
    for (const row of rows) {
      const r = (JSON.parse(row.payload) as { result: Record<string, unknown> }).result;
      await client.query(sql, [row.dedupKey, r.accession, r.analyteLoinc, r.instrumentId, r.resultedAt, r.value, r.unit, r.valueText]);
    }
    return rows.length / ((performance.now() - start) / 1000);
  });
}

// Median time of claiming (and releasing) one batch with `pending` rows waiting.
function claimCost(path: string, pending: number): number {
  const db = openDatabase(path + '.db', 5_000);
  fillPending(db, pending, benchRows(0, 1)[0]!);
  const outbox = new Outbox(db, Date.now);
  const times: number[] = [];
  for (let i = 0; i < 220; i++) {
    const start = performance.now();
    const rows = outbox.claimDue('postgres', BATCH);
    times.push(performance.now() - start);
    outbox.release('postgres', rows);
  }
  db.close();
  return median(times.slice(20)) * 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function chunks<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}
