// The breaker on PostgreSQL, with the real delivery engine, a real store and a real server behind a TCP proxy: one
// connection reset mid-batch is one failure (its rows are retried, the sink keeps going, each result is loaded once);
// failed statements in a row pause the sink, and so does a connection that cannot be made, at once.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Drain, type DrainPolicy } from '../../src/delivery/drain.js';
import { createPostgresSink, type PostgresSink } from '../../src/sinks/postgres.js';
import type { Sink } from '../../src/delivery/contract.js';
import { enqueue, sampleResult, states, testStore, type TestStore } from '../delivery/fixture.js';
import { ManualClock } from '../fixtures/manual-clock.js';
import { until } from '../lims/drain-rig.js';
import { audited, loaded, testDatabase, type TestDatabase } from './pg.js';
import { TcpProxy } from './tcp-proxy.js';

const PROBE_MS = 60_000;

let db: TestDatabase;
let store: TestStore;
let proxy: TcpProxy;
let sink: PostgresSink;
let clock: ManualClock;
let drain: Drain | undefined;

beforeEach(async () => {
  db = await testDatabase();
  store = testStore();
  clock = new ManualClock(store.clock.now);
  Object.defineProperty(store.clock, 'now', { get: () => clock.now() });
  const target = new URL(db.url);
  proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
  sink = createPostgresSink({ url: proxy.url(db.url), schema: db.schema, poolSize: 1, gatewayId: 'gw-breaker', connectTimeoutMs: 1_000, idleTimeoutMs: 100 });
});
afterEach(async () => {
  await drain?.stop();
  drain = undefined;
  await sink.close();
  await proxy.close();
  store.close();
  await db.close();
});

/** A drain on the manual clock over a sink that counts its batches; the breaker's state is noted after each one. */
function start(policy: Partial<DrainPolicy>): { batches: number[]; circuits: string[] } {
  const batches: number[] = [];
  const circuits: string[] = [];
  const counting: Sink = { name: sink.name, close: () => sink.close(), deliver: (rows, signal) => (batches.push(rows.length), sink.deliver(rows, signal)) };
  const d = new Drain({
    sink: counting,
    outbox: store.outbox,
    policy: { backoff: { baseMs: 1_000, capMs: 10_000 }, probeIntervalMs: PROBE_MS, failureThreshold: 3, batchSize: 10, inFlight: 1, ...policy },
    clock,
    random: () => 0.5,
    onOutcomes: () => circuits.push(d.status().circuit),
  });
  drain = d;
  d.start();
  return { batches, circuits };
}

const idle = (): boolean => drain!.status().batchesInFlight === 0;
const add = (n: number): string[] =>
  enqueue(
    store.db,
    'postgres',
    Array.from({ length: n }, (_, i) => sampleResult(i)),
    clock.now(),
  );

it('a connection reset mid-batch costs its rows a retry, not a pause; each result is loaded once', async () => {
  const keys = add(60);
  proxy.dropAnswers(1);
  const { batches, circuits } = start({});
  await until(() => idle() && states(store.db, 'postgres').sent === 50, 'every batch but the reset one');
  expect(circuits.every((c) => c === 'closed')).toBe(true);
  expect(batches).toEqual([10, 10, 10, 10, 10, 10]);
  // Its ten rows wait their own backoff (0.5 of 1 s, one attempt each), then go again on a fresh connection.
  expect(store.db.prepare(`SELECT DISTINCT next_attempt_at - ?, attempts FROM outbox WHERE state = 'pending'`).raw().all(clock.now())).toEqual([[500, 1]]);
  clock.advance(500);
  await until(() => idle() && states(store.db, 'postgres').sent === 60, 'the retried rows');
  expect(circuits.every((c) => c === 'closed')).toBe(true);

  const table = await loaded(db);
  const audit = await audited(db);
  expect(table.size).toBe(60);
  for (const key of keys) {
    expect(audit.get(key)?.filter((o) => o === 'inserted')).toEqual(['inserted']);
    expect(table.get(key)?.load_count).toBe(audit.get(key)?.length);
  }
  // The reset statement had committed: its resend was absorbed, not loaded twice.
  expect([...audit.values()].filter((o) => o.join() === 'inserted,absorbed')).toHaveLength(10);
});

it('failureThreshold failed statements in a row pause the sink until probeIntervalMs, then it resumes', async () => {
  add(30);
  proxy.dropAnswers(3);
  const pausedAt = clock.now();
  const { batches, circuits } = start({ batchSize: 5 });
  await until(() => idle() && drain!.status().circuit === 'open', 'the breaker to open');
  expect(batches).toEqual([5, 5, 5]);
  expect(circuits).toEqual(['closed', 'closed', 'open']);
  expect(drain!.status()).toMatchObject({ nextProbeAt: pausedAt + PROBE_MS, pausedSince: pausedAt, deadLettered: 0 });

  clock.advance(PROBE_MS);
  await until(() => idle() && states(store.db, 'postgres').sent === 30, 'the backlog', 20_000);
  expect(batches.slice(3, 4)).toEqual([1]);
  expect(drain!.status().circuit).toBe('closed');
  expect((await loaded(db)).size).toBe(30);
});

it('a connection that cannot be made pauses the sink at once, without burning attempts', async () => {
  add(20);
  proxy.cut();
  // A threshold no batch can reach: only the failed connect itself can have opened the breaker.
  const { batches } = start({ failureThreshold: 50 });
  await until(() => idle() && drain!.status().circuit === 'open', 'the breaker to open');
  expect(batches).toEqual([10]);
  expect(states(store.db, 'postgres')).toEqual({ pending: 20 });
  expect(store.db.prepare('SELECT MAX(attempts) FROM outbox').pluck().get()).toBe(0);

  proxy.restore();
  clock.advance(PROBE_MS);
  await until(() => idle() && states(store.db, 'postgres').sent === 20, 'the backlog', 20_000);
  expect((await loaded(db)).size).toBe(20);
});
