// The order desk against the real LIMS test server and a real store: answers decided within the analyzer's deadline
// whatever the LIMS does, what the analyzer holds recorded once it has it, downloads offered once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/clock.js';
import { silentLog } from '../../src/log.js';
import type { LimsServer, TestSpecimen } from '../../src/lims-server/server.js';
import { answerReserveMs, OrderDesk, type OrdersSource } from '../../src/orders/desk.js';
import type { OrderQuery } from '../../src/orders/order.js';
import type { OrdersClient } from '../../src/sinks/lims-orders.js';
import { startOrdersLims, type OrdersLims } from '../fixtures/orders-lims.js';
import { localDay } from '../../src/store/instrument-days.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../fixtures/manual-clock.js';
import { until } from '../fixtures/until.js';
import { scratchPerTest } from '../store/store-fixtures.js';

const order = (orderId: string, loinc: string) => ({ orderId, loinc, orderedAt: '2026-07-01T08:00:00Z' });
const specimens: TestSpecimen[] = [
  {
    accession: 'S1',
    orders: [order('o1', '2823-3'), order('o2', '2345-7'), order('o3', '718-7')],
    patient: { id: 'PID', name: 'Doe^Jane', birthDate: '1970-01-02', sex: 'F' },
  },
  { accession: 'S2', orders: [order('o4', '2823-3')] },
  { accession: 'SLOW', orders: [order('o5', '2823-3')] },
  { accession: 'DOWN', orders: [order('o6', '2823-3')] },
];
const mapping = [
  { code: 'K', loinc: '2823-3' },
  { code: 'GLU', loinc: '2345-7' },
];
const silent = silentLog;
const q = (...accessions: string[]): OrderQuery => ({
  specimens: accessions.map((accession) => ({ kind: 'id', accession })),
  tests: 'all',
  request: 'orders',
  requestCode: 'O',
});

let server: LimsServer;
let client: OrdersClient;
let lims: OrdersLims;
const scratch = scratchPerTest();

beforeAll(async () => {
  lims = await startOrdersLims(specimens, { SLOW: 'slow', DOWN: '503' }, 30_000);
  client = lims.client;
  server = lims.server;
});

afterAll(async () => {
  await lims.close();
});

const bounds = { maxSpecimens: 100, lookupsInFlight: 4 };

function desk(store: Store, clock: Clock = systemClock, queryTimeoutMs = 10_000): OrderDesk {
  return new OrderDesk({ instrumentId: 'chem-1', mapping, queryTimeoutMs, ...bounds, clock, log: silent, source: client, ledger: store.orders });
}

/** The real orders client, counting the lookups it is asked for and how many of them were in flight at once. */
function counting(source: OrdersClient) {
  const seen = { lookups: 0, inFlight: 0, maxInFlight: 0 };
  const wrapped: OrdersSource = {
    specimen: async (accession, instrumentId, signal) => {
      seen.lookups += 1;
      seen.maxInFlight = Math.max(seen.maxInFlight, ++seen.inFlight);
      try {
        return await source.specimen(accession, instrumentId, signal);
      } finally {
        seen.inFlight -= 1;
      }
    },
    worklist: (instrumentId, signal) => source.worklist(instrumentId, signal),
  };
  return { seen, source: wrapped };
}

describe('the order desk', () => {
  it('answers with the orders the instrument can run; once delivered they are recorded and counted', async () => {
    const s = scratch();
    const store = s.open();
    const d = desk(store);
    const ticket = (await d.ask([q('S1', 'NONE')], Date.now()))!;
    expect(ticket.answer).toMatchObject({ kind: 'orders', without: ['NONE'] });
    expect(ticket.answer.kind === 'orders' && ticket.answer.specimens[0]!.orders.map((o) => o.analyzerCode)).toEqual(['K', 'GLU']);
    expect(ticket.orders).toEqual([
      { orderId: 'o1', accession: 'S1' },
      { orderId: 'o2', accession: 'S1' },
    ]);
    expect(store.orders.dispatches.counts().pending).toBe(0);
    d.delivered(ticket);
    expect(store.orders.dispatches.counts().pending).toBe(2);
    const figures = store.orders.figures(localDay(Date.now()))[0]?.figures;
    expect(figures).toMatchObject({ queries: 1, 'answered-orders': 1 });
  });

  it("tells the listener each figure, and an accepted answer's time from the query's arrival", async () => {
    const clock = new ManualClock(Date.now());
    const told: [string, number | undefined][] = [];
    const store = scratch().open();
    const d = new OrderDesk({
      instrumentId: 'chem-1',
      mapping,
      queryTimeoutMs: 10_000,
      ...bounds,
      clock,
      log: silent,
      source: client,
      ledger: store.orders,
      onFigure: (f, ms) => told.push([f, ms]),
    });
    const arrived = clock.now();
    const ticket = (await d.ask([q('S2')], arrived))!;
    clock.advance(1_250);
    d.delivered(ticket);
    expect(told).toEqual([
      ['queries', undefined],
      ['answered-orders', clock.now() - arrived],
    ]);
    expect(told[1]![1]).toBeGreaterThanOrEqual(1_250);
  });

  it('keeps the deadline when the wall clock steps back between the query and its decision', async () => {
    const s = scratch();
    const clock = new ManualClock(Date.now());
    const d = desk(s.open(), clock, 4_000);
    const before = server.stats().orderLookups;
    const receivedAt = clock.monotonic();
    clock.step(-2 * 3_600_000);
    let settled = false;
    const asked = d.ask([q('SLOW')], receivedAt).finally(() => (settled = true));
    await until(() => server.stats().orderLookups > before);
    clock.advance(4_000 - answerReserveMs(4_000));
    await until(() => settled);
    expect((await asked)!.answer).toMatchObject({ kind: 'no-information', reason: 'lims-timeout' });
  });

  it('a LIMS too slow for the deadline: "no information" when the LIMS budget runs out, not later', async () => {
    const s = scratch();
    const clock = new ManualClock(Date.now());
    const d = desk(s.open(), clock, 4_000);
    const before = server.stats().orderLookups;
    let settled = false;
    const asked = d.ask([q('SLOW')], clock.now()).finally(() => (settled = true));
    await until(() => server.stats().orderLookups > before);
    clock.advance(4_000 - answerReserveMs(4_000) - 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    clock.advance(1);
    const ticket = (await asked)!;
    expect(ticket.answer).toEqual({ kind: 'no-information', reason: 'lims-timeout', without: ['SLOW'] });
    // The answer must begin before the analyzer's deadline, with time left to send it.
    expect(ticket.startBy).toBeLessThan(clock.now() + answerReserveMs(4_000));
  });

  it('a query naming 30,000 specimens: the first 100 are looked up, 3 at a time; the rest are refused, counted and logged without ids', async () => {
    server.loadOrders(Array.from({ length: 150 }, (_, i) => ({ accession: `M${i}`, orders: [{ ...order(`m${i}`, '2823-3'), instruments: ['bulk'] }] })));
    const store = scratch().open();
    const { seen, source } = counting(client);
    const logs: string[] = [];
    const log = { ...silent, warn: (obj: object, msg?: string) => logs.push(`${msg} ${JSON.stringify(obj)}`) };
    const d = new OrderDesk({
      instrumentId: 'chem-1',
      mapping,
      queryTimeoutMs: 10_000,
      maxSpecimens: 100,
      lookupsInFlight: 3,
      clock: systemClock,
      log,
      source,
      ledger: store.orders,
    });
    const named = Array.from({ length: 30_000 }, (_, i) => `M${i}`);
    const ticket = (await d.ask([q(...named)], Date.now()))!;
    expect(seen).toMatchObject({ lookups: 100, inFlight: 0 });
    expect(seen.maxInFlight).toBeLessThanOrEqual(3);
    expect(ticket.answer.kind === 'orders' && ticket.answer.specimens.map((s) => s.accession)).toEqual(named.slice(0, 100));
    expect(ticket.orders).toHaveLength(100);
    expect(store.orders.figures(localDay(Date.now()))[0]?.figures).toMatchObject({ queries: 1, 'specimens-over-limit': 1 });
    expect(logs).toEqual([expect.stringContaining('{"refused":29900,"maxSpecimens":100}')]);
    expect(logs.join()).not.toMatch(/M\d/);
  });

  it('lookups not begun when the LIMS budget runs out are not made: the answer comes from those that were, in time', async () => {
    server.loadOrders(Array.from({ length: 100 }, (_, i) => ({ accession: `L${i}`, orders: [{ ...order(`l${i}`, '2823-3'), instruments: ['bulk'] }] })));
    server.configure({ latencyMs: 150 });
    try {
      const { seen, source } = counting(client);
      const d = new OrderDesk({
        instrumentId: 'chem-1',
        mapping,
        queryTimeoutMs: 2_000,
        ...bounds,
        clock: systemClock,
        log: silent,
        source,
        ledger: scratch().open().orders,
      });
      const started = Date.now();
      const ticket = (await d.ask([q(...Array.from({ length: 100 }, (_, i) => `L${i}`))], started))!;
      // 100 lookups of 150 ms, 4 at a time, take 3.75 s; the budget is 2 s minus the 1 s reserve.
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(seen.lookups).toBeLessThan(100);
      expect(ticket.answer.kind).toBe('orders');
      expect(ticket.startBy - started).toBeLessThan(2_000);
    } finally {
      server.configure({ latencyMs: 0 });
    }
  });

  it('a specimen id that could not be decoded (U+FFFD) is not looked up: refused and counted, the others answered', async () => {
    const store = scratch().open();
    const { seen, source } = counting(client);
    const d = new OrderDesk({
      instrumentId: 'chem-1',
      mapping,
      queryTimeoutMs: 10_000,
      ...bounds,
      clock: systemClock,
      log: silent,
      source,
      ledger: store.orders,
    });
    const ticket = (await d.ask([q('S\ufffd2', 'S2')], Date.now()))!;
    expect(seen.lookups).toBe(1);
    expect(ticket.answer).toMatchObject({ kind: 'orders', without: [] });
    expect(store.orders.figures(localDay(Date.now()))[0]?.figures).toMatchObject({ queries: 1, 'specimens-unreadable': 1 });
  });

  it('a LIMS answering 503 or down: "no information" saying why; a cancel gets no answer', async () => {
    const s = scratch();
    const d = desk(s.open());
    expect((await d.ask([q('DOWN')], Date.now()))!.answer).toMatchObject({ kind: 'no-information', reason: 'lims-unavailable' });
    expect(await d.ask([{ ...q('S1'), request: 'cancel', requestCode: 'A' }], Date.now())).toBeNull();
    const unsupported = await d.ask([{ ...q('S1'), request: 'unsupported', requestCode: 'F' }], Date.now());
    expect(unsupported!.answer).toMatchObject({ kind: 'no-information', reason: 'unsupported-request' });
  });

  it('downloads: each pending specimen once, never one already sent or on its way', async () => {
    const s = scratch();
    const store = s.open();
    const d = desk(store);
    const first = await d.downloads(new AbortController().signal, new Set(['o4']));
    // S2's only order is on its way; SLOW and DOWN are pending too (lookups by accession misbehave, the worklist does not).
    expect(first.map((t) => t.orders.map((o) => o.orderId))).toEqual([['o1', 'o2'], ['o5'], ['o6']]);
    d.delivered(first[0]!);
    const second = await d.downloads(new AbortController().signal, new Set());
    expect(second.map((t) => t.orders.map((o) => o.orderId))).toEqual([['o4'], ['o5'], ['o6']]);
    expect(store.orders.figures(localDay(Date.now()))).toEqual([{ instrumentId: 'chem-1', figures: { downloads: 1 } }]);
  });
});
