// The morning after a night without the LIMS: `labgate run` (a child, the event-loop probe preloaded) drains a backlog
// of LABGATE_BENCH_BACKLOG results (default 1,000,000, written straight into its store for both sinks) to the real
// PostgreSQL and the LIMS test server (its own process) at full speed, with the configuration's defaults, while 16
// analyzers on socat cables each send a 5-result message every 2 s and wait for its ACK. Windows of
// LABGATE_BENCH_WINDOW_SECONDS (default 10) take turns: the analyzers quiet (each drain's idle rate), then sending
// (its rate during ingest). The same analyzers with no drain: a gateway over an empty store before, and the same
// gateway once its backlog is gone. Figures: commit-ACK p99 and the gateway's event-loop delay p99 beside no drain
// (target ACK p99 <= 100 ms), and each drain's rate during ingest beside its idle rate (target >= 0.8).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/e2e/harness.js';
import { benchDatabase, withClient } from './delivery-fixture.js';
import { deliveredSoFar, ProbedGateway, seedBacklog, TimedAnalyzer, waitFor, writeGatewayConfig, type LoopDelay } from './during-drain-parts.js';
import { startLimsChild } from './lims-child.js';
import { sig, type BenchLine } from './line.js';

const BACKLOG = Number(process.env.LABGATE_BENCH_BACKLOG ?? 1_000_000);
const WINDOW_MS = Number(process.env.LABGATE_BENCH_WINDOW_SECONDS ?? 10) * 1000;
const MAX_MS = Number(process.env.LABGATE_BENCH_DRAIN_MINUTES ?? 40) * 60_000;
const INSTRUMENTS = 16;
const SEND_EVERY_MS = 2_000;
const RESULTS = 5;
const SINKS = ['postgres', 'lims'] as const;
// A sink with fewer left than this at a window's end may have run dry within it: the window is not its drain's.
const DRY = 5_000;
const ACK_TARGET_MS = 100;
const RATE_TARGET = 0.8;

/** The figures this file emits (`npm run bench <figure>`); one run measures them all. */
export const figures = ['ingest.during-drain.ack', 'ingest.during-drain.loop', 'ingest.during-drain.postgres', 'ingest.during-drain.lims'];

interface Window {
  kind: 'idle' | 'ingest' | 'no-drain';
  ms: number;
  delivered: Record<string, number>;
  /** Rows of each sink still to deliver at the window's end. */
  left: Record<string, number>;
  loop: LoopDelay;
  acks: number[];
}

/** Runs the phases and emits the four lines. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const loadBefore = loadavg().map((l) => sig(l, 2));
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-during-drain-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const pgdb = await benchDatabase(process.env);
    cleanups.push(() => pgdb.close());
    const lims = await startLimsChild({ staticTokens: ['bench-token'], faults: { latencyMs: 0 } });
    cleanups.push(() => lims.stop());
    const analyzers = Array.from({ length: INSTRUMENTS }, (_, i) => new TimedAnalyzer(`chem${i + 1}`, join(dir, `chem${i + 1}`)));
    for (const a of analyzers) {
      await a.plug();
      cleanups.push(() => a.cable.unplug());
    }
    const sinks = sinkConfig(dir, pgdb.url, pgdb.schema, lims.url);
    const setup = async (name: string) => {
      const port = await freePort();
      const config = writeGatewayConfig(
        dir,
        name,
        port,
        analyzers.map((a) => a.config()),
        sinks,
      );
      return { port, config };
    };

    // No drain, before: an empty store.
    const quiet = await setup('quiet');
    const before = await withGateway(quiet.config, dir, quiet.port, cleanups, async (gw) => [
      await window(gw, quiet.port, analyzers, 'no-drain', () => ({})),
      await window(gw, quiet.port, analyzers, 'no-drain', () => ({})),
    ]);

    const seedStart = performance.now();
    seedBacklog(join(dir, 'backlog'), SINKS, BACKLOG);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const busy = await setup('backlog');
    let ingested = 0;
    const drainStart = performance.now();
    const drainedAt: Record<string, number> = {};
    const { during, after } = await withGateway(busy.config, dir, busy.port, cleanups, async (gw) => {
      const left = (delivered: Record<string, number>): Record<string, number> =>
        Object.fromEntries(SINKS.map((s) => [s, BACKLOG + ingested - (delivered[s] ?? 0)]));
      const during: Window[] = [];
      // The drains' first batches (connections opened, statements planned) are not a rate of either kind.
      await sleep(3_000);
      for (let n = 0; performance.now() - drainStart < MAX_MS; n++) {
        const w = await window(gw, busy.port, analyzers, n % 2 === 0 ? 'idle' : 'ingest', left);
        ingested += w.acks.length * RESULTS;
        during.push(w);
        for (const s of SINKS) if (w.left[s]! <= 0 && drainedAt[s] === undefined) drainedAt[s] = (performance.now() - drainStart) / 1000;
        if (SINKS.every((s) => w.left[s]! <= DRY)) break;
      }
      await waitFor(async () => Object.values(left(await deliveredSoFar(busy.port, SINKS))).every((n) => n <= 0), MAX_MS, 'the backlog to drain');
      for (const s of SINKS) drainedAt[s] ??= (performance.now() - drainStart) / 1000;
      const after = [await window(gw, busy.port, analyzers, 'no-drain', left), await window(gw, busy.port, analyzers, 'no-drain', left)];
      return { during, after };
    });
    const sent = analyzers.reduce((n, a) => n + a.acked, 0) * RESULTS;
    const loaded = await withClient(pgdb.url, async (c) => Number((await c.query(`SELECT count(*) AS n FROM "${pgdb.schema}".result_load`)).rows[0].n));
    const limsRecords = (await lims.stats()).records;
    const context = {
      backlog: BACKLOG,
      instruments: INSTRUMENTS,
      sendEveryMs: SEND_EVERY_MS,
      resultsPerMessage: RESULTS,
      windowSeconds: WINDOW_MS / 1000,
      seedSeconds: sig(seedSeconds),
      drainedAfterSeconds: Object.fromEntries(SINKS.map((s) => [s, sig(drainedAt[s]!)])),
      everyResultOnceInBoth: loaded === BACKLOG + sent && limsRecords === BACKLOG + sent,
      unacked: analyzers.reduce((n, a) => n + a.unacked, 0),
      server: pgdb.server,
      loadAverage: { before: loadBefore, after: loadavg().map((l) => sig(l, 2)) },
      cpus: cpus().length,
    };
    for (const line of lines([...before, ...after], during)) emit({ ...line, ...context });
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
  }
}

// The lines, from the windows: ACK and loop figures over the windows in which some drain ran, the rates over
// neighbouring idle/ingest windows in which the same drains ran.
function lines(quiet: Window[], during: Window[]): BenchLine[] {
  const draining = (w: Window, sink: string): boolean => w.left[sink]! > DRY;
  const ingesting = during.filter((w) => w.kind === 'ingest' && SINKS.some((s) => draining(w, s)));
  const ack = p99(ingesting.flatMap((w) => w.acks));
  const ackQuiet = p99(quiet.flatMap((w) => w.acks));
  const loops = (ws: Window[]) => ws.map((w) => sig(w.loop.p99));
  const out: BenchLine[] = [
    {
      bench: 'ingest.during-drain.ack',
      value: sig(ack),
      unit: 'ms commit-ACK p99 while both sinks drain',
      noDrain: sig(ackQuiet),
      ratioToNoDrain: sig(ack / ackQuiet),
      target: ACK_TARGET_MS,
      messages: ingesting.reduce((n, w) => n + w.acks.length, 0),
      noDrainMessages: quiet.reduce((n, w) => n + w.acks.length, 0),
      maxMs: sig(Math.max(...ingesting.flatMap((w) => w.acks))),
      // Each ingest window's p99 and which drains ran in it: both, or the LIMS alone once PostgreSQL is through.
      windows: ingesting.map((w) => ({ p99: sig(p99(w.acks)), draining: SINKS.filter((s) => draining(w, s)) })),
    },
    {
      bench: 'ingest.during-drain.loop',
      value: sig(median(ingesting.map((w) => w.loop.p99))),
      unit: "ms event-loop delay p99 of the gateway (median of the ingest windows')",
      noDrain: sig(median(quiet.map((w) => w.loop.p99))),
      ingestWindows: loops(ingesting),
      idleDrainWindows: loops(during.filter((w) => w.kind === 'idle' && SINKS.some((s) => draining(w, s)))),
      noDrainWindows: loops(quiet),
    },
  ];
  for (const sink of SINKS) {
    const pairs: [Window, Window][] = [];
    during.forEach((w, i) => {
      const idle = during[i - 1];
      if (w.kind !== 'ingest' || !idle || !draining(w, sink) || !draining(idle, sink)) return;
      // The other drain in the same state in both, or the pair compares two different machines' worth of work.
      if (SINKS.some((s) => draining(w, s) !== draining(idle, s))) return;
      pairs.push([idle, w]);
    });
    const rate = (ws: Window[]): number => ws.reduce((n, w) => n + w.delivered[sink]!, 0) / (ws.reduce((n, w) => n + w.ms, 0) / 1000);
    const ingest = rate(pairs.map(([, w]) => w));
    const idle = rate(pairs.map(([w]) => w));
    out.push({
      bench: `ingest.during-drain.${sink}`,
      value: sig(ingest),
      unit: 'results/s delivered while the analyzers send',
      idleRate: sig(idle),
      ratioToIdle: sig(ingest / idle),
      target: RATE_TARGET,
      pairs: pairs.length,
      pairRatios: pairs.map(([a, b]) => sig(b.delivered[sink]! / b.ms / (a.delivered[sink]! / a.ms))),
    });
  }
  return out;
}

// One window: the loop probe reset, the analyzers sending (an ingest or no-drain window) or quiet, the rows delivered.
async function window(
  gw: ProbedGateway,
  httpPort: number,
  analyzers: readonly TimedAnalyzer[],
  kind: Window['kind'],
  left: (delivered: Record<string, number>) => Record<string, number>,
): Promise<Window> {
  const first = await deliveredSoFar(httpPort, SINKS);
  await gw.loop('reset');
  const start = performance.now();
  let sending = kind !== 'idle';
  const senders = sending ? analyzers.map((a, i) => a.sendLoop(SEND_EVERY_MS, (i * SEND_EVERY_MS) / INSTRUMENTS, () => sending, RESULTS)) : [];
  await sleep(WINDOW_MS);
  sending = false;
  await Promise.all(senders);
  const loop = await gw.loop('read');
  const last = await deliveredSoFar(httpPort, SINKS);
  const ms = performance.now() - start;
  const acks = analyzers.flatMap((a) => a.take());
  return { kind, ms, delivered: Object.fromEntries(SINKS.map((s) => [s, last[s]! - first[s]!])), left: left(last), loop, acks };
}

// Starts the gateway, waits until it is ready with every cable open, runs `work`, stops it.
async function withGateway<T>(
  config: string,
  dir: string,
  httpPort: number,
  cleanups: (() => Promise<void> | void)[],
  work: (gw: ProbedGateway) => Promise<T>,
): Promise<T> {
  const gw = ProbedGateway.start(config, join(dir, 'gateway.log'));
  cleanups.push(() => gw.stop());
  await waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${httpPort}/healthz`, { signal: AbortSignal.timeout(5_000) });
      const body = (await res.json()) as { reasons: string[]; instruments: { state: string }[] };
      return !body.reasons.some((r) => r.startsWith('starting')) && body.instruments.every((i) => i.state === 'connected');
    },
    120_000,
    `the gateway to be ready (log: ${join(dir, 'gateway.log')})`,
  );
  try {
    return await work(gw);
  } finally {
    await gw.stop();
  }
}

function sinkConfig(dir: string, pgUrl: string, schema: string, limsUrl: string): object {
  const url = new URL(pgUrl);
  let passwordFile: string | undefined;
  if (url.password) {
    // The configuration refuses a password in the URL: it comes from a file.
    passwordFile = join(dir, 'pg-password');
    writeFileSync(passwordFile, decodeURIComponent(url.password), { mode: 0o600 });
    url.password = '';
  }
  const tokenFile = join(dir, 'lims-token');
  writeFileSync(tokenFile, 'bench-token', { mode: 0o600 });
  return {
    postgres: { url: url.toString(), schema, ...(passwordFile ? { passwordFile } : {}) },
    lims: { baseUrl: limsUrl, resourcePath: '/api/v1/results', auth: { kind: 'static', tokenFile } },
  };
}

function p99(ms: number[]): number {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}
