// HL7 two-way over the analyzer's own order port (orders.orderPort): the emulated analyzer queries on the
// instrument's link (an in-memory cable) and plays a real TCP server on its order port, where labgate connects back,
// writes the answer and the order messages, and reads the analyzer's acknowledgments. A refused or dropped order port
// fails the answer (counted, never recorded as sent); labgate connects again by itself and the next answer goes out.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Hl7QueryingAnalyzer, type EmulatedDialect } from '../../drivers/hl7/emulator-query.js';
import { hl7Options } from '../../drivers/hl7/options.js';
import { orderPortDelay } from '../../drivers/hl7/order-port.js';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import { systemClock } from '../../src/clock.js';
import { silentLog } from '../../src/log.js';
import type { InboundMessage } from '../../src/message.js';
import type { DriverEvent, DriverRunner, IngestOutcome } from '../../src/runner-contract.js';
import type { Store } from '../../src/store/store.js';
import { TcpClientEndpoint } from '../../src/transport/tcp.js';
import { startOrdersLims, type OrdersLims } from '../fixtures/orders-lims.js';
import { transportPair } from '../astm/pair.js';
import { until } from '../fixtures/until.js';
import { scratchPerTest } from '../store/store-fixtures.js';

const mapping = [
  { code: 'GLU', loinc: '2345-7' },
  { code: 'K', loinc: '2823-3' },
];
const o = (orderId: string, loinc: string) => ({ orderId, loinc, orderedAt: '2026-07-01T08:00:00Z', priority: 'routine' as const });
let lims: OrdersLims;
const scratch = scratchPerTest();
const runners: DriverRunner[] = [];
const servers: net.Server[] = [];

beforeAll(async () => {
  lims = await startOrdersLims(
    [
      { accession: 'S1', orders: [o('a1', '2345-7'), o('a2', '2823-3')] },
      { accession: 'S2', orders: [o('b1', '2345-7')] },
      { accession: 'S3', orders: [o('c1', '2823-3')] },
    ],
    {},
    10_000,
  );
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});
afterAll(async () => {
  await lims.close();
});

/** The analyzer's order port: each connection labgate opens becomes the emulator's order link. */
function orderPort(emulated: Hl7QueryingAnalyzer, port = 0): Promise<{ server: net.Server; port: number; sockets: net.Socket[] }> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    emulated.orderLink({ write: (d) => new Promise((resolve) => socket.write(d, resolve)), onData: (l) => socket.on('data', l) });
  });
  servers.push(server);
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({ server, port: (server.address() as net.AddressInfo).port, sockets })));
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function setup(dialect: EmulatedDialect, port: number) {
  const store: Store = scratch().open({ now: Date.now });
  const { analyzer, gateway } = transportPair();
  const onInstrumentLink: string[] = [];
  gateway.onWrite((d) => onInstrumentLink.push(d.toString('latin1')));
  const events: DriverEvent[] = [];
  const ingest = (m: InboundMessage): IngestOutcome => ({ kind: 'committed', summary: store.ingest(m), rejections: m.rejections });
  const emulated = new Hl7QueryingAnalyzer({ write: (d) => analyzer.write(d), onData: (l) => analyzer.onData(l) }, dialect);
  const start = () => {
    const runner = createHl7Runner(
      {
        profile: { id: 'chem-1', gatewayId: 'gw-test', timezone: 'UTC', mapping },
        transport: gateway,
        ingest,
        accepting: () => true,
        clock: systemClock,
        log: silentLog,
        onEvent: (e) => events.push(e),
        orders: { source: lims.client, ledger: store.orders },
        dial: (address) => new TcpClientEndpoint(address).open(),
      },
      hl7Options({ accession: ['OBR-2.1', 'SPM-2.1.1'], orders: { query: true, queryTimeoutMs: 2_000, dialect, orderPort: { host: '127.0.0.1', port } } }),
    );
    runner.start();
    runners.push(runner);
  };
  return { store, events, emulated, onInstrumentLink, start };
}

const figures = (events: DriverEvent[]): string[] => events.flatMap((e) => (e.kind === 'orders' ? [e.figure] : []));

describe('orders.orderPort option and its reconnect delay', () => {
  it('waits 1 s doubling to 30 s, never more, spread ±20%', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 40].map((a) => orderPortDelay(a, () => 0.5))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(orderPortDelay(40, () => 0.999)).toBeLessThanOrEqual(36_000);
    expect(orderPortDelay(0, () => 0)).toBe(800);
  });

  it('is off by default, takes a host and a port, and refuses anything else', () => {
    expect(hl7Options({}).orders.orderPort).toBeNull();
    expect(hl7Options({ orders: { orderPort: { host: ' 10.20.1.31 ', port: 5200 } } }).orders.orderPort).toEqual({ host: '10.20.1.31', port: 5200 });
    for (const orderPort of [{ host: '', port: 5200 }, { host: 'a', port: 0 }, { host: 'a', port: 70_000 }, { host: 'a' }, { host: 'a', port: 1, tls: true }]) {
      expect(() => hl7Options({ orders: { orderPort } as never })).toThrow();
    }
  });
});

describe.each(['display-query', 'law'] as const)('HL7 two-way over the order port, %s', (dialect) => {
  it('the query arrives on the instrument link, the answer and orders go out on the order port and are accepted there; dispatched once', async () => {
    const port = await freePort();
    const { store, events, emulated, onInstrumentLink, start } = setup(dialect, port);
    const analyzerPort = await orderPort(emulated, port);
    start();
    await until(() => analyzerPort.sockets.length === 1);
    expect(await emulated.query('S1', 2_000)).toMatchObject({ kind: 'answered', found: true, codes: ['GLU', 'K'] });
    await until(() => store.orders.dispatches.counts().pending === 2);
    expect(figures(events)).toEqual(['queries', 'answered-orders']);
    // Nothing of the answer on the instrument's own connection.
    expect(onInstrumentLink).toEqual([]);
    expect(await emulated.sendResults('S1', ['GLU', 'K'], () => '4.2')).toBe('AA');
    expect(onInstrumentLink.join('')).toContain('MSA|AA|');
  });

  it('an order port that refuses fails the answer, never recorded as sent; labgate connects again by itself and the next answer goes out', async () => {
    const port = await freePort();
    const { store, events, emulated, start } = setup(dialect, port);
    start();
    expect(await emulated.query('S2', 1_500)).toMatchObject({ kind: 'missed' });
    await until(() => figures(events).includes('answers-failed'));
    expect(store.orders.dispatches.counts().pending).toBe(0);
    const analyzerPort = await orderPort(emulated, port);
    await until(() => analyzerPort.sockets.length === 1, 5_000);
    expect(await emulated.query('S2', 2_000)).toMatchObject({ kind: 'answered', found: true, codes: ['GLU'] });
    await until(() => store.orders.dispatches.counts().pending === 1);
  });

  it('an order port dropped before the analyzer accepted: the answer fails, nothing recorded as sent', async () => {
    const port = await freePort();
    const { store, events, emulated, start } = setup(dialect, port);
    const analyzerPort = await orderPort(emulated, port);
    start();
    await until(() => analyzerPort.sockets.length === 1);
    emulated.stallNext = () => analyzerPort.sockets[0]!.destroy();
    await emulated.query('S3', 1_000);
    await until(() => figures(events).includes('answers-failed'));
    expect(store.orders.dispatches.counts().pending).toBe(0);
    // It connects again, and the analyzer's re-query is answered and accepted.
    await until(() => analyzerPort.sockets.length === 2, 5_000);
    expect(await emulated.query('S3', 2_000)).toMatchObject({ kind: 'answered', found: true, codes: ['K'] });
    await until(() => store.orders.dispatches.counts().pending === 1);
  });
});
