// The LIMS drain against a LIMS that misbehaves a little, beside the same drain against a clean one, measured in
// the same run: the real delivery engine (Drain over a store in a temporary directory, the configuration's default
// pacing) and the LIMS sink at concurrency 16, against the LIMS test server at 20 ms latency. The faults: 5 % lost
// responses (applied, then the socket is destroyed), 5 % 503 with Retry-After: 1, 2 % 429 (Retry-After: 1) and tokens
// that expire every 10 s. Each figure is the time to drain the whole backlog, the retried stragglers included; every
// record must be applied exactly once, nothing dead-lettered (checked, or the bench fails).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Drain, type DrainPolicy } from '../src/delivery/drain.js';
import { systemClock } from '../src/clock.js';
import type { LimsFaults } from '../src/lims-server/server.js';
import { sampleRows } from '../src/lims-server/sample-rows.js';
import { createLimsSink } from '../src/sinks/lims.js';
import { openStore } from '../src/store/store.js';
import { benchRows, fillOutbox } from './delivery-fixture.js';
import { startLimsChild, type LimsChild } from './lims-child.js';
import { sig, type BenchLine } from './line.js';
import { silentLog } from '../src/log.js';

const LATENCY_MS = 20;
const CONCURRENCY = 16;
// Large enough that the stragglers' last second or two (a 503's Retry-After) is a small part of the drain.
const ROWS = 30_000;
const ROUNDS = 3;
const FAULTS: Partial<LimsFaults> = { rateLost: 0.05, rate503: 0.05, rate429: 0.02, retryAfterSeconds: 1, tokenTtlSeconds: 10 };
const CLEAN: Partial<LimsFaults> = { rateLost: 0, rate503: 0, rate429: 0, tokenTtlSeconds: 3600 };
// The configuration's defaults (src/config/schema.ts), the LIMS sink's batch size included.
const POLICY: DrainPolicy = { backoff: { baseMs: 1_000, capMs: 300_000 }, probeIntervalMs: 15_000, failureThreshold: 5, batchSize: 64, inFlight: 2 };
const silent = silentLog;

interface Drained {
  rate: number;
  /** Results per second until 99 % were delivered: the drain's pace before the stragglers' tail. */
  pace: number;
  /** Seconds the last 1 % took: the retried stragglers, waiting out their backoff and Retry-After. */
  tail: number;
  /** Times the breaker was seen open after a batch. */
  pauses: number;
  replays: number;
}

/** Drains ROWS fresh results (ids from `from`) through the real Drain; throws unless each was applied exactly once. */
async function drainOnce(server: LimsChild, secretFile: string, from: number): Promise<Drained> {
  const dir = mkdtempSync(join(tmpdir(), 'lims-faults-bench-'));
  const store = openStore({ dataDir: dir, sinks: ['lims'], now: Date.now });
  fillOutbox(store.db, benchRows(from, ROWS, 'lims'), Date.now());
  const sink = createLimsSink(
    {
      baseUrl: server.url,
      resourcePath: '/api/v1/results',
      concurrency: CONCURRENCY,
      timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
      auth: { kind: 'oauth2', tokenUrl: `${server.url}/oauth/token`, clientId: 'labgate', clientSecretFile: secretFile },
    },
    { now: Date.now, log: silent, gatewayId: 'bench' },
  );
  try {
    // Warm up as a running gateway is: a token and keep-alive connections.
    await sink.deliver(sampleRows(CONCURRENCY, 10_000_000 + from), new AbortController().signal);
    const before = await server.stats();
    let delivered = 0;
    let pauses = 0;
    let almostAt: number | undefined;
    let finish = (): void => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const drain: Drain = new Drain({
      sink,
      outbox: store.outbox,
      policy: POLICY,
      clock: systemClock,
      random: Math.random,
      onOutcomes: (_rows, outcomes) => {
        delivered += outcomes.filter((o) => o.kind === 'delivered').length;
        if (delivered >= 0.99 * ROWS) almostAt ??= performance.now();
        if (drain.status().circuit !== 'closed') pauses++;
        if (delivered >= ROWS) finish();
      },
    });
    const started = performance.now();
    drain.start();
    await finished;
    const ended = performance.now();
    const seconds = (ended - started) / 1000;
    await drain.stop();
    const after = await server.stats();
    const states = store.db.prepare(`SELECT state, count(*) AS n FROM outbox GROUP BY state`).all() as { state: string; n: number }[];
    const applied = after.applied - before.applied;
    const records = after.records - before.records;
    if (JSON.stringify(states) !== JSON.stringify([{ state: 'sent', n: ROWS }]) || applied !== ROWS || records !== ROWS) {
      throw new Error(`not every record applied exactly once: outbox ${JSON.stringify(states)}, ${records} records, ${applied} applications`);
    }
    const almost = (almostAt ?? ended) - started;
    return {
      rate: ROWS / seconds,
      pace: (0.99 * ROWS) / (almost / 1000),
      tail: (ended - started - almost) / 1000,
      pauses,
      replays: after.replays - before.replays,
    };
  } finally {
    await sink.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['lims.drain.faults'];

/** bench entry point. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const server = await startLimsChild({ clients: [{ clientId: 'labgate', clientSecret: 'bench-secret' }], faults: { latencyMs: LATENCY_MS } });
  const dir = mkdtempSync(join(tmpdir(), 'lims-faults-secret-'));
  const secretFile = join(dir, 'secret');
  writeFileSync(secretFile, 'bench-secret');
  try {
    // Clean and faulty drains alternate, so a noisy neighbour weighs on both alike; the figures are the medians, and
    // the ratio is the median of the rounds' own ratios (each faulty drain beside the clean one just before it).
    const clean: Drained[] = [];
    const faulty: Drained[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await server.configure(CLEAN);
      clean.push(await drainOnce(server, secretFile, 2 * round * ROWS * 2));
      await server.configure(FAULTS);
      faulty.push(await drainOnce(server, secretFile, (2 * round + 1) * ROWS * 2));
    }
    const value = median(faulty.map((d) => d.rate));
    const cleanRate = median(clean.map((d) => d.rate));
    const ratios = faulty.map((d, i) => d.rate / clean[i]!.rate);
    emit({
      bench: 'lims.drain.faults',
      value: sig(value),
      unit: 'results/s',
      clean: sig(cleanRate),
      ratioToClean: sig(median(ratios)),
      target: 0.8,
      roundRatios: ratios.map((r) => sig(r)),
      // The same ratio up to 99 % delivered: what the faults cost while there is work to overlap the retries with.
      paceRatioTo99pct: sig(median(faulty.map((d, i) => d.pace / clean[i]!.pace))),
      appliedExactlyOnce: true,
      runs: faulty.map((d) => sig(d.rate)),
      cleanRuns: clean.map((d) => sig(d.rate)),
      tailSeconds: faulty.map((d) => sig(d.tail, 2)),
      pauses: faulty.map((d) => d.pauses),
      replays: faulty.map((d) => d.replays),
      rows: ROWS,
      latencyMs: LATENCY_MS,
      concurrency: CONCURRENCY,
      faults: FAULTS,
      loadAvg1m: sig(loadavg()[0] ?? 0),
      cpus: availableParallelism(),
    });
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
