// FHIR delivery: the real drain (outbox claims, Observation mapping, batch Bundles, per-entry outcomes, outcome
// marks) into the FHIR test server, beside the server's raw capacity for the same bundles: the very bundles the sink
// sends, built before the clock starts and posted straight from here with as many in flight as the drain keeps.
// Best of ROUNDS alternating measurements, each against a fresh server in its own process.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Drain } from '../src/delivery/drain.js';
import { systemClock } from '../src/clock.js';
import type { ResultPayload } from '../src/payload.js';
import { createFhirSink, type FhirSinkOptions } from '../src/sinks/fhir.js';
import { observationContent, toObservation } from '../src/sinks/fhir-observation.js';
import { entryOf, firstStep } from '../src/sinks/fhir-steps.js';
import type { OutboxRow } from '../src/delivery/contract.js';
import { openDatabase } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';
import { benchRows, fillOutbox } from './delivery-fixture.js';
import { startFhirChild } from './fhir-child.js';
import { sig, type BenchLine } from './line.js';
import { silentLog } from '../src/log.js';

const ROWS = Number(process.env.LABGATE_BENCH_FHIR_ROWS ?? 6_000);
const BATCH = 50;
const IN_FLIGHT = 2;
const ROUNDS = 3;
const silent = silentLog;

function options(baseUrl: string): FhirSinkOptions {
  return {
    baseUrl,
    createMode: 'auto',
    identifierSystem: 'urn:labgate:dedup-key',
    specimenSystem: 'urn:labgate:accession',
    deviceSystem: 'urn:labgate:instrument',
    analyzerCodeSystem: 'urn:labgate:test-code',
    ucumUnits: {},
    qc: false,
    timeouts: { connectMs: 2_000, headersMs: 30_000, bodyMs: 30_000 },
    auth: { kind: 'none' },
    connections: IN_FLIGHT,
  };
}

/** The bundles the sink sends for `rows`, `BATCH` entries each (conditional creates). */
function bundles(rows: readonly OutboxRow[], o: FhirSinkOptions): string[] {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += BATCH) {
    const entry = rows.slice(i, i + BATCH).map((row, index) => {
      const observation = toObservation(JSON.parse(row.payload) as ResultPayload, o);
      const step = firstStep(null, row.recordId, 'conditional-create', `${encodeURIComponent(o.identifierSystem)}|${row.dedupKey}`);
      return entryOf({ index, observation, content: observationContent(observation)!, recordId: row.recordId, step });
    });
    out.push(JSON.stringify({ resourceType: 'Bundle', type: 'batch', entry }));
  }
  return out;
}

/** Results per second posting the prepared bundles with IN_FLIGHT in flight. */
async function rawCapacity(rows: readonly OutboxRow[]): Promise<number> {
  const server = await startFhirChild({});
  const agent = new Agent({ connections: IN_FLIGHT, pipelining: 1 });
  try {
    const bodies = bundles(rows, options(server.url));
    const post = async (body: string): Promise<void> => {
      const res = await request(server.url, {
        method: 'POST',
        body,
        dispatcher: agent,
        headers: { 'content-type': 'application/fhir+json', prefer: 'return=minimal' },
      });
      const text = await res.body.text();
      if (res.statusCode !== 200 || !text.includes('"201"')) throw new Error(`raw post: ${res.statusCode}`);
    };
    await post(bundles(benchRows(10_000_000, 1, 'fhir'), options(server.url))[0]!); // connections warm, as the drain's are
    const start = performance.now();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < bodies.length) await post(bodies[next++]!);
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    return rows.length / ((performance.now() - start) / 1000);
  } finally {
    await agent.close();
    await server.stop();
  }
}

/** Results per second through the real drain from a real outbox. */
async function drainRate(rows: readonly OutboxRow[], dir: string): Promise<number> {
  const server = await startFhirChild({});
  const store = openDatabase(join(dir, `drain-${rows[0]!.id}.db`), 5_000);
  const sink = createFhirSink(options(server.url), { now: Date.now, log: silent });
  try {
    fillOutbox(store, rows, Date.now() - 1_000);
    const outbox = new Outbox(store, Date.now);
    // The CapabilityStatement is read and the connections opened before the clock starts, as in a running gateway.
    await sink.deliver(benchRows(10_000_000, 1, 'fhir'), new AbortController().signal);
    const policy = { backoff: { baseMs: 1_000, capMs: 300_000 }, probeIntervalMs: 15_000, failureThreshold: 5, batchSize: BATCH, inFlight: IN_FLIGHT };
    const drain = new Drain({ sink, outbox, policy, clock: systemClock, random: Math.random });
    const start = performance.now();
    drain.start();
    while (drain.status().delivered < rows.length) {
      const s = drain.status();
      if (s.circuit !== 'closed' || s.deadLettered > 0 || s.conflicts > 0) throw new Error(`drain did not deliver: ${s.lastError}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const seconds = (performance.now() - start) / 1000;
    await drain.stop();
    const stats = await server.stats();
    if (stats.created !== rows.length + 1) throw new Error(`the server created ${stats.created} Observations for ${rows.length + 1} results`);
    return rows.length / seconds;
  } finally {
    await sink.close();
    store.close();
    await server.stop();
  }
}

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['fhir.drain'];

/** bench entry point. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-fhir-'));
  try {
    let ceiling = 0;
    let drain = 0;
    const runs: { ceiling: number; drain: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rows = benchRows(round * ROWS, ROWS, 'fhir');
      // Each goes first in turn, so a noisy neighbour on the machine does not decide the ratio.
      let c = 0;
      let d = 0;
      if (round % 2 === 0) {
        c = await rawCapacity(rows);
        d = await drainRate(rows, dir);
      } else {
        d = await drainRate(rows, dir);
        c = await rawCapacity(rows);
      }
      runs.push({ ceiling: sig(c), drain: sig(d) });
      ceiling = Math.max(ceiling, c);
      drain = Math.max(drain, d);
    }
    emit({
      bench: 'fhir.drain',
      value: sig(drain),
      unit: 'results/s',
      ceiling: sig(ceiling),
      ratio: sig(drain / ceiling),
      target: 0.8,
      runs,
      rows: ROWS,
      batch: BATCH,
      inFlight: IN_FLIGHT,
      server: 'labgate FHIR test server (Medplum fhir-router 4.5.2, memory repository, R4 validation), own process',
      loadAvg1m: sig(loadavg()[0] ?? 0),
      cpus: availableParallelism(),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
