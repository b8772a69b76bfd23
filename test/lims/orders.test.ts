// The LIMS orders contract against the real test server: lookups (found, none, slow, down, malformed), the pending
// worklist, and dispatches drained from a real store through the real Drain, each reaching the LIMS once.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Drain } from '../../src/delivery/drain.js';
import { systemClock } from '../../src/clock.js';
import { createLimsServer, type LimsServer, type TestSpecimen } from '../../src/lims-server/server.js';
import { createDispatchSink } from '../../src/sinks/lims-dispatch.js';
import { createOrdersClient, ordersEndpoint, type OrdersEndpoint } from '../../src/sinks/lims-orders.js';
import { createTokenProvider } from '../../src/sinks/lims-token.js';
import { DISPATCH_SINK } from '../../src/delivery/dispatch-contract.js';
import { until } from '../fixtures/until.js';
import { scratchPerTest } from '../store/store-fixtures.js';

const specimens: TestSpecimen[] = [
  {
    accession: 'S1',
    orders: [
      { orderId: 'o1', loinc: '2823-3', orderedAt: '2026-07-01T08:00:00Z' },
      { orderId: 'o2', loinc: '2345-7', priority: 'stat', orderedAt: '2026-07-01T08:00:00Z' },
    ],
    patient: { id: 'PID', name: 'Doe^Jane', birthDate: '1970-01-02', sex: 'F' },
  },
  { accession: 'S2', orders: [] },
  { accession: 'S3', orders: [{ orderId: 'o3', loinc: '2823-3', orderedAt: '2026-07-01T08:00:00Z', instruments: ['other'] }] },
];

let server: LimsServer;
let endpoints: OrdersEndpoint[] = [];
let tokenAgent: Agent;
const scratch = scratchPerTest();

afterEach(async () => {
  await Promise.all(endpoints.map((e) => e.close()));
  endpoints = [];
  await tokenAgent.close();
  await server?.stop();
});

async function start(headersMs = 2_000): Promise<OrdersEndpoint> {
  server = createLimsServer({ staticTokens: ['tok'], orders: specimens, faults: { slowMs: 1_500, orderFaults: { SLOW: 'slow', DOWN: '503', BAD: '500' } } });
  await server.start();
  const dir = mkdtempSync(join(tmpdir(), 'orders-'));
  writeFileSync(join(dir, 'token'), 'tok\n');
  tokenAgent = new Agent();
  const endpoint = ordersEndpoint(
    { baseUrl: server.url, ordersPath: '/orders', timeouts: { connectMs: 500, headersMs, bodyMs: headersMs } },
    createTokenProvider({ kind: 'static', tokenFile: join(dir, 'token') }, { dispatcher: tokenAgent, now: Date.now, timeoutMs: 1_000 }),
    2,
  );
  endpoints.push(endpoint);
  return endpoint;
}

const never = new AbortController().signal;

describe('LIMS orders lookups', () => {
  it('a specimen with orders and its patient; none for an unknown or empty specimen', async () => {
    const client = createOrdersClient(await start());
    const found = await client.specimen('S1', 'chem-1', never);
    expect(found).toMatchObject({
      kind: 'specimens',
      specimens: [
        {
          accession: 'S1',
          orders: [
            { orderId: 'o1', priority: 'routine' },
            { orderId: 'o2', priority: 'stat' },
          ],
          patient: { sex: 'F' },
        },
      ],
    });
    expect(await client.specimen('NOPE', 'chem-1', never)).toEqual({ kind: 'specimens', specimens: [] });
    expect(await client.specimen('S2', 'chem-1', never)).toMatchObject({ kind: 'specimens', specimens: [{ accession: 'S2', orders: [] }] });
  });

  it('slow beyond the deadline, 503 and 500 are told apart', async () => {
    const client = createOrdersClient(await start());
    const deadline = AbortSignal.timeout(300);
    expect(await client.specimen('SLOW', 'chem-1', deadline)).toMatchObject({ kind: 'failed', reason: 'lims-timeout' });
    expect(await client.specimen('DOWN', 'chem-1', never)).toMatchObject({ kind: 'failed', reason: 'lims-unavailable', detail: 'HTTP 503' });
    expect(await client.specimen('BAD', 'chem-1', never)).toMatchObject({ kind: 'failed', reason: 'lims-error', detail: 'HTTP 500' });
  });

  it('a LIMS that is not there is unavailable', async () => {
    const client = createOrdersClient(await start());
    await server.stop();
    expect(await client.specimen('S1', 'chem-1', never)).toMatchObject({ kind: 'failed', reason: 'lims-unavailable' });
    await server.start();
  });

  it('the pending worklist holds what is not dispatched to this instrument yet', async () => {
    const client = createOrdersClient(await start());
    const pending = await client.worklist('chem-1', never);
    expect(pending.kind === 'specimens' && pending.specimens.map((s) => s.accession)).toEqual(['S1']);
    const other = await client.worklist('other', never);
    expect(other.kind === 'specimens' && other.specimens.map((s) => [s.accession, s.orders.map((o) => o.orderId)])).toEqual([
      ['S1', ['o1', 'o2']],
      ['S3', ['o3']],
    ]);
  });
});

describe('dispatches through the store and the Drain', () => {
  it('each order that reached the analyzer is told to the LIMS once, across a restart with rows in flight', async () => {
    const endpoint = await start();
    const s = scratch();
    let store = s.open();
    expect(
      store.orders.recordSent(
        'chem-1',
        [
          { orderId: 'o1', accession: 'S1' },
          { orderId: 'o2', accession: 'S1' },
        ],
        s.clock.now(),
        'query',
      ),
    ).toBe(2);
    // The analyzer re-queried and got the same orders again: nothing new to tell.
    expect(store.orders.recordSent('chem-1', [{ orderId: 'o1', accession: 'S1' }], s.clock.now(), 'query')).toBe(0);
    expect(store.orders.sentOf('chem-1', ['o1', 'o2', 'o9'])).toEqual(new Set(['o1', 'o2']));
    // A gateway that sent the PUTs and died before marking them: the rows are due again after the restart.
    const claimed = store.orders.dispatches.claimDue(DISPATCH_SINK, 10);
    await createDispatchSink(endpoint, Date.now).deliver(claimed, never);
    store.close();
    store = s.open();
    const drain = new Drain({
      sink: createDispatchSink(endpoint, Date.now),
      outbox: store.orders.dispatches,
      policy: { backoff: { baseMs: 10, capMs: 100 }, batchSize: 10, inFlight: 1, probeIntervalMs: 100, failureThreshold: 5 },
      clock: systemClock,
      random: () => 0.5,
    });
    drain.start();
    await until(() => store.orders.dispatches.counts().sent === 2, 5_000);
    await drain.stop();
    expect(server.dispatches()).toEqual({ 'o1|chem-1': 2, 'o2|chem-1': 2 });
    expect(server.stats()).toMatchObject({ dispatches: 2, dispatchPuts: 4 });
  });

  it('a dispatch the LIMS refuses for good is a dead letter; an outage is a retry', async () => {
    const endpoint = await start();
    const s = scratch();
    const store = s.open();
    store.orders.recordSent(
      'chem-1',
      [
        { orderId: 'gone', accession: 'S9' },
        { orderId: 'o1', accession: 'S1' },
      ],
      s.clock.now(),
      'download',
    );
    const sink = createDispatchSink(endpoint, Date.now);
    const rows = store.orders.dispatches.claimDue(DISPATCH_SINK, 10);
    const outcomes = await sink.deliver(rows, never);
    expect(outcomes.map((o) => o.kind)).toEqual(['dead', 'delivered']);
    store.orders.dispatches.recordOutcomes(DISPATCH_SINK, rows, outcomes, [null, null]);
    expect(store.orders.dispatches.counts()).toMatchObject({ dead: 1, sent: 1, pending: 0 });
    expect(store.orders.figures('2026-07-01')).toEqual([{ instrumentId: 'chem-1', figures: { downloads: 1 } }]);
    server.configure({ outage: true });
    store.orders.recordSent('chem-1', [{ orderId: 'o2', accession: 'S1' }], s.clock.now(), 'query');
    const [outage] = await sink.deliver(store.orders.dispatches.claimDue(DISPATCH_SINK, 10), never);
    expect(outage).toMatchObject({ kind: 'retry' });
  });
});
