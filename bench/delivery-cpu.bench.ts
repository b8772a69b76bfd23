// What delivering one result costs the gateway's CPU, per sink: one drain (the real Drain over the outcome marks, the
// configuration's default batch and in-flight) delivers LABGATE_BENCH_CPU_ROWS results (default 100,000, written
// straight into a store) to the real PostgreSQL or the LIMS test server (its own process, so its CPU is not counted).
// The process's CPU (every thread: the checkpointer, the collector) per delivered result, and beside it the store's
// share: the main thread's CPU inside the outbox's calls (claims, outcome marks, due-time look-ups), read from
// /proc/thread-self/schedstat around each (they are synchronous; checkpoints run on their own thread). The rest is
// the sink's (its client library, building and reading the requests) and the drain loop's.
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../src/clock.js';
import type { Sink } from '../src/delivery/contract.js';
import { Drain, type DrainPolicy } from '../src/delivery/drain.js';
import { OutcomeMarks } from '../src/delivery/outcome-marks.js';
import { silentLog } from '../src/log.js';
import { createLimsSink } from '../src/sinks/lims.js';
import { createPostgresSink } from '../src/sinks/postgres.js';
import { openStore } from '../src/store/store.js';
import { benchDatabase } from './delivery-fixture.js';
import { seedBacklog } from './during-drain-parts.js';
import { startLimsChild } from './lims-child.js';
import { sig, type BenchLine, type Wants } from './line.js';

const ROWS = Number(process.env.LABGATE_BENCH_CPU_ROWS ?? 100_000);
const POLICY = { backoff: { baseMs: 1_000, capMs: 300_000 }, probeIntervalMs: 15_000, failureThreshold: 5, inFlight: 2 };

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['drain.cpu.postgres', 'drain.cpu.lims'];

/** Emits one line per sink asked for (Linux only: /proc/thread-self/schedstat). */
export async function run(emit: (line: BenchLine) => void, wants: Wants = () => true): Promise<void> {
  if (threadCpuNs() === null) return;
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-cpu-'));
  try {
    if (wants('drain.cpu.postgres')) {
      const pgdb = await benchDatabase(process.env);
      try {
        const sink = createPostgresSink({ url: pgdb.url, schema: pgdb.schema, poolSize: 2, gatewayId: 'gw-bench' });
        await sink.pool.query('SELECT 1');
        emit({ bench: 'drain.cpu.postgres', ...(await measure(join(dir, 'pg'), sink, 500)), server: pgdb.server });
      } finally {
        await pgdb.close();
      }
    }
    if (wants('drain.cpu.lims')) {
      const lims = await startLimsChild({ staticTokens: ['bench-token'], faults: { latencyMs: 0 } });
      try {
        writeFileSync(join(dir, 'token'), 'bench-token');
        const sink = createLimsSink(
          {
            baseUrl: lims.url,
            resourcePath: '/api/v1/results',
            concurrency: 8,
            timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
            auth: { kind: 'static', tokenFile: join(dir, 'token') },
          },
          { now: Date.now, log: silentLog, gatewayId: 'gw-bench' },
        );
        emit({ bench: 'drain.cpu.lims', ...(await measure(join(dir, 'lims'), sink, 64)) });
      } finally {
        await lims.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(dataDir: string, sink: Sink, batchSize: number) {
  seedBacklog(dataDir, [sink.name], ROWS);
  const store = openStore({ dataDir, sinks: [sink.name], now: Date.now });
  const spent = { ns: 0, calls: 0 };
  const by: Record<string, number> = {};
  // Every call the drain makes into SQLite, timed on this thread (nothing else runs on it meanwhile).
  const timed =
    <A extends unknown[], R>(name: string, fn: (...args: A) => R) =>
    (...args: A): R => {
      const before = threadCpuNs()!;
      try {
        return fn(...args);
      } finally {
        const ns = threadCpuNs()! - before;
        spent.ns += ns;
        spent.calls++;
        by[name] = (by[name] ?? 0) + ns;
      }
    };
  const outbox = store.outbox;
  const marks = new OutcomeMarks(
    {
      claimDue: timed('claims', outbox.claimDue.bind(outbox)),
      release: timed('other', outbox.release.bind(outbox)),
      nextDueAt: timed('other', outbox.nextDueAt.bind(outbox)),
      recordBatches: timed('marks', outbox.recordBatches.bind(outbox)),
    },
    systemClock,
  );
  let delivered = 0;
  const policy: DrainPolicy = { ...POLICY, batchSize };
  const drain = new Drain({
    sink,
    outbox: marks,
    policy,
    clock: systemClock,
    random: Math.random,
    onOutcomes: (_rows, outcomes) => (delivered += outcomes.filter((o) => o.kind === 'delivered').length),
  });
  const load = loadavg()[0]!;
  const cpu = process.cpuUsage();
  const start = performance.now();
  drain.start();
  try {
    while (delivered < ROWS) {
      if (drain.status().circuit !== 'closed') throw new Error(`drain paused: ${drain.status().lastError}`);
      await sleep(5);
    }
  } finally {
    await drain.stop();
  }
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - start) / 1000;
  const totalUs = (used.user + used.system) / ROWS;
  const storeUs = spent.ns / 1000 / ROWS;
  await sink.close();
  store.close();
  return {
    value: sig(totalUs),
    unit: 'CPU µs per delivered result (whole process)',
    storeUs: sig(storeUs),
    storeShare: sig(storeUs / totalUs),
    storeUsBy: Object.fromEntries(Object.entries(by).map(([k, ns]) => [k, sig(ns / 1000 / ROWS)])),
    sinkAndDrainUs: sig(totalUs - storeUs),
    storeCalls: spent.calls,
    rows: ROWS,
    batchSize,
    inFlight: POLICY.inFlight,
    ratePerSecond: sig(ROWS / seconds),
    loadAverage: [sig(load, 2), sig(loadavg()[0]!, 2)],
  };
}

/** CPU nanoseconds this thread has run, or null where /proc/thread-self/schedstat is missing. */
function threadCpuNs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  } catch {
    return null;
  }
}
