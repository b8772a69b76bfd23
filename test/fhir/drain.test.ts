// The FHIR sink under the real delivery engine: a Drain over a real SQLite store, the FHIR test server misbehaving
// (lost answers, server errors, throttling, latency), and a gateway that dies between sending a batch and marking
// it. Every time: each result is one Observation, created once, and nothing is dead-lettered.
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { Drain } from '../../src/delivery/drain.js';
import { FhirTestServer, type FhirServerOptions } from '../../src/fhir-server/server.js';
import { seededRandom } from '../../src/lims-server/faults.js';
import { createFhirSink } from '../../src/sinks/fhir.js';
import { enqueue, sampleResult, states, testStore, type TestStore } from '../delivery/fixture.js';
import { captureLog } from '../lims/harness.js';
import { sinkOptions, SYSTEMS } from './harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(n: number, faults: FhirServerOptions['faults'] = {}) {
  const server = new FhirTestServer({ faults, random: seededRandom(7) });
  await server.start();
  cleanups.push(() => server.stop());
  const store: TestStore = testStore();
  cleanups.push(() => store.close());
  Object.defineProperty(store.clock, 'now', { get: () => Date.now() });
  const keys = enqueue(
    store.db,
    'fhir',
    Array.from({ length: n }, (_, i) => sampleResult(i)),
    Date.now() - 1,
  );
  const sink = createFhirSink(sinkOptions(server.url, { timeouts: { connectMs: 500, headersMs: 1_000, bodyMs: 1_000 } }), { now: Date.now, log: captureLog() });
  cleanups.push(() => sink.close());
  return { server, store, keys, sink };
}

function drainOf(sink: ReturnType<typeof createFhirSink>, store: TestStore): Drain {
  const policy = { backoff: { baseMs: 20, capMs: 200 }, probeIntervalMs: 100, failureThreshold: 3, batchSize: 20, inFlight: 2 };
  const drain = new Drain({ sink, outbox: store.outbox, policy, clock: systemClock, random: seededRandom(3) });
  cleanups.push(() => drain.stop());
  return drain;
}

async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function expectOnePerKey(server: FhirTestServer, keys: readonly string[]): Promise<void> {
  const census = await server.census();
  expect(census.observations).toBe(keys.length);
  expect(Object.keys(census.perIdentifier).sort()).toEqual([...keys].sort());
  expect(
    Object.values(census.perIdentifier).every((n) => n === 1),
    'one Observation per key',
  ).toBe(true);
  expect(
    Object.values(census.versions).every((n) => n === 1),
    'each created once, never rewritten',
  ).toBe(true);
  for (const key of keys.slice(0, 3)) expect(await server.byIdentifier(SYSTEMS.identifierSystem, key)).toHaveLength(1);
}

describe('FHIR sink under the drain', () => {
  it('a misbehaving server: every result delivered exactly once, nothing dead', { timeout: 60_000 }, async () => {
    const { server, store, keys, sink } = await setUp(400, {
      rateLost: 0.3,
      rate500: 0.1,
      rate503: 0.05,
      rate429: 0.05,
      retryAfterSeconds: 0,
      latencyMs: 2,
      jitterMs: 8,
    });
    const drain = drainOf(sink, store);
    drain.start();
    await until(() => states(store.db, 'fhir').sent === keys.length, 'every row sent');
    expect(states(store.db, 'fhir')).toEqual({ sent: keys.length });
    expect(drain.status()).toMatchObject({ deadLettered: 0, conflicts: 0 });
    await expectOnePerKey(server, keys);
    // The dice did their work: some batches were applied and their answers lost, then found again.
    expect(server.stats().unchanged, JSON.stringify(server.stats())).toBeGreaterThan(0);
  });

  it('the gateway dies between sending batches and marking them: the restarted drain finds them, one Observation each', async () => {
    const { server, store, keys, sink } = await setUp(120);
    // What a SIGKILL leaves: batches the server applied whose outcomes the store never recorded.
    for (let i = 0; i < 3; i++) {
      const rows = store.outbox.claimDue('fhir', 25);
      expect((await sink.deliver(rows, new AbortController().signal)).every((o) => o.kind === 'delivered')).toBe(true);
    }
    store.outbox.resetInFlight();
    expect(states(store.db, 'fhir')).toEqual({ pending: keys.length });
    const drain = drainOf(sink, store);
    drain.start();
    await until(() => states(store.db, 'fhir').sent === keys.length, 'every row sent');
    await expectOnePerKey(server, keys);
    expect(server.stats()).toMatchObject({ created: keys.length, unchanged: 75 });
  });
});
