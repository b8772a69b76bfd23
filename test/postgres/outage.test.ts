// PostgreSQL unreachable for a while, then back: the drain pauses and probes, nothing is dead-lettered, no row's
// attempts are burned, and once the network returns every result is loaded exactly once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { Drain } from '../../src/delivery/drain.js';
import { createPostgresSink } from '../../src/sinks/postgres.js';
import { enqueue, sampleResult, states, testStore, type TestStore } from '../delivery/fixture.js';
import { audited, loaded, testDatabase, type TestDatabase } from './pg.js';
import { TcpProxy } from './tcp-proxy.js';

let db: TestDatabase;
let store: TestStore;
let proxy: TcpProxy;

beforeAll(async () => {
  db = await testDatabase();
  store = testStore();
  const target = new URL(db.url);
  proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
});
afterAll(async () => {
  await proxy.close();
  store.close();
  await db.close();
});

const until = async (check: () => boolean, ms: number): Promise<void> => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

it('rides out an outage: nothing dead-lettered, everything delivered once', async () => {
  store.clock.now = Date.now();
  Object.defineProperty(store.clock, 'now', { get: () => Date.now() });
  const keys = enqueue(
    store.db,
    'postgres',
    Array.from({ length: 120 }, (_, i) => sampleResult(i)),
    Date.now(),
  );
  const sink = createPostgresSink({
    url: proxy.url(db.url),
    schema: db.schema,
    poolSize: 1,
    gatewayId: 'gw-outage',
    connectTimeoutMs: 1_000,
    idleTimeoutMs: 100,
  });
  const policy = { backoff: { baseMs: 50, capMs: 500 }, probeIntervalMs: 100, failureThreshold: 5, batchSize: 10, inFlight: 2 };
  const drain = new Drain({ sink, outbox: store.outbox, policy, clock: systemClock, random: Math.random });

  proxy.cut();
  drain.start();
  await until(() => drain.status().circuit !== 'closed', 5_000);
  await new Promise((r) => setTimeout(r, 1_500)); // about a dozen failed probes
  expect(drain.status().circuit).not.toBe('closed');
  expect(states(store.db, 'postgres')).toEqual({ pending: 120 });
  expect(store.db.prepare('SELECT MAX(attempts) FROM outbox').pluck().get()).toBe(0);

  proxy.restore();
  // A second cut in the middle of delivery: a batch whose commit answer is lost is re-sent and absorbed.
  await until(() => (states(store.db, 'postgres').sent ?? 0) >= 40, 20_000);
  proxy.cut();
  await new Promise((r) => setTimeout(r, 500));
  proxy.restore();
  await until(() => states(store.db, 'postgres').sent === 120, 20_000);
  await drain.stop();
  await sink.close();
  expect(states(store.db, 'postgres')).toEqual({ sent: 120 });
  const table = await loaded(db);
  const audit = await audited(db);
  expect(table.size).toBe(120);
  for (const key of keys) {
    expect(audit.get(key)?.filter((o) => o === 'inserted')).toEqual(['inserted']);
    expect(audit.get(key)?.every((o) => o !== 'conflict')).toBe(true);
    expect(table.get(key)?.load_count).toBe(audit.get(key)?.length);
  }
});
