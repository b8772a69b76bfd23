// LIMS drain throughput against the test server with 20 ms latency: the sink at concurrency 16 beside the
// ceiling concurrency / latency, and the one-request-at-a-time loop a naive client runs as the peer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleRows } from '../src/lims-server/sample-rows.js';
import { createLimsSink } from '../src/sinks/lims.js';
import type { OutboxRow } from '../src/delivery/contract.js';
import { startLimsChild } from './lims-child.js';
import { sig, type BenchLine } from './line.js';
import { silentLog } from '../src/log.js';

const LATENCY_MS = 20;
const CONCURRENCY = 16;
const ROWS = 2000;
const PEER_ROWS = 100;
const RUNS = 3;
const silent = silentLog;

/** Results per second delivering `rows` in batches of `batch` with `concurrency` requests in flight. */
async function measure(url: string, secretFile: string, rows: OutboxRow[], concurrency: number, batch: number): Promise<number> {
  const sink = createLimsSink(
    {
      baseUrl: url,
      resourcePath: '/api/v1/results',
      concurrency,
      timeouts: { connectMs: 2000, headersMs: 5000, bodyMs: 5000 },
      auth: { kind: 'oauth2', tokenUrl: `${url}/oauth/token`, clientId: 'labgate', clientSecretFile: secretFile },
    },
    { now: Date.now, log: silent, gatewayId: 'bench' },
  );
  try {
    // Warm up: token and keep-alive connections, as in a running gateway.
    await sink.deliver(rows.slice(0, concurrency), new AbortController().signal);
    const rest = rows.slice(concurrency);
    const started = performance.now();
    // As the delivery engine does: two batches in flight, so one batch's tail overlaps the next one's start.
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < rest.length) {
        const slice = rest.slice(next, (next += batch));
        const outs = await sink.deliver(slice, new AbortController().signal);
        const bad = outs.find((o) => o.kind !== 'delivered');
        if (bad) throw new Error(`not delivered: ${JSON.stringify(bad)}`);
      }
    };
    await Promise.all([lane(), lane()]);
    return rest.length / ((performance.now() - started) / 1000);
  } finally {
    await sink.close();
  }
}

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['lims.drain'];

/** bench entry point. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const server = await startLimsChild({ clients: [{ clientId: 'labgate', clientSecret: 'bench-secret' }], faults: { latencyMs: LATENCY_MS } });
  const dir = mkdtempSync(join(tmpdir(), 'lims-bench-'));
  const secretFile = join(dir, 'secret');
  writeFileSync(secretFile, 'bench-secret');
  try {
    const batch = 128;
    // Three runs on fresh record ids; the median is the figure, because the host may be shared and noisy.
    const runs: number[] = [];
    for (let k = 0; k < RUNS; k++) runs.push(await measure(server.url, secretFile, sampleRows(ROWS + CONCURRENCY, k * 10_000), CONCURRENCY, batch));
    const rate = [...runs].sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
    const peer = await measure(server.url, secretFile, sampleRows(PEER_ROWS + 1, 1_000_000), 1, 1);
    const ceiling = CONCURRENCY / (LATENCY_MS / 1000);
    emit({
      bench: 'lims.drain',
      value: sig(rate),
      unit: 'results/s',
      ceiling,
      ratio: sig(rate / ceiling),
      target: 0.9,
      peerOneAtATime: sig(peer),
      speedupOverPeer: sig(rate / peer),
      // What 16 one-at-a-time loops would reach at the round trip the peer measured (timer slop, host load).
      ceilingAtPeerLatency: sig(CONCURRENCY * peer),
      runs: runs.map((x) => sig(x)),
      rows: ROWS,
      latencyMs: LATENCY_MS,
      concurrency: CONCURRENCY,
      batch,
      loadAvg1m: sig(loadavg()[0] ?? 0),
      cpus: availableParallelism(),
    });
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
