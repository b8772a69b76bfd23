// Two-way HL7 end to end: `labgate run` as a child with two HL7 instruments, one listening on TCP and one on a socat
// pseudo-terminal with the native serial binding, one in each dialect (and then the other way round); the LIMS test
// server as its own process, PostgreSQL as the second sink. Each emulated analyzer queries 50 specimens (orders for 40,
// none for 10, 5 slowed beyond the deadline, 5 answering 503): every query is answered before the analyzer's deadline,
// the analyzers send results for exactly the ordered tests, which reach both sinks once, and each order's dispatch
// reaches the LIMS once. A SIGKILL while an answer is on the wire, LAW download mode across a restart, and an analyzer
// whose answers go to its own order port (orders.orderPort, a real TCP server here).
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Hl7QueryingAnalyzer, type AnalyzerLink, type EmulatedDialect } from '../../drivers/hl7/emulator-query.js';
import type { TestSpecimen } from '../../src/lims-server/server.js';
import type { TestDatabase } from '../postgres/pg.js';
import { expressibleCodes, hl7Instrument, ordersOf, tcpLink } from './analyzers.js';
import { centralDatabase, expectDeliveredOnce } from './central.js';
import { cabledScratch, freePort, GatewayChild, startLims, until, writeConfig, type LimsChild } from './harness.js';
import { readStore } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const DEADLINE = 2_000;
const value = (code: string): string => `${code.length}.5`;

/** 50 specimens for one instrument: orders for the first 40 (30-34 slowed, 35-39 answering 503), none for the last 10. */
function fifty(prefix: string): { accessions: string[]; withOrders: TestSpecimen[]; empty: TestSpecimen[]; faults: [string, string][] } {
  const accessions = Array.from({ length: 50 }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
  const faults = [...accessions.slice(30, 35).map((a) => [a, 'slow']), ...accessions.slice(35, 40).map((a) => [a, '503'])] as [string, string][];
  // Ten without orders: five the LIMS knows with an empty list, five it does not know (404).
  return {
    accessions,
    withOrders: accessions.slice(0, 40).map(ordersOf),
    empty: accessions.slice(40, 45).map((accession) => ({ accession, orders: [] })),
    faults,
  };
}

interface Lane {
  id: string;
  dialect: EmulatedDialect;
  prefix: string;
  analyzer?: Hl7QueryingAnalyzer;
}

/** Queries all 50 in turn, runs what each answer orders; returns the codes run per accession. */
async function queryAll(analyzer: Hl7QueryingAnalyzer, accessions: readonly string[]): Promise<Map<string, string[]>> {
  const ran = new Map<string, string[]>();
  for (const accession of accessions) {
    const outcome = await analyzer.query(accession, DEADLINE);
    expect(outcome.kind, `${accession} answered before the analyzer's deadline`).toBe('answered');
    if (outcome.kind !== 'answered' || outcome.codes.length === 0) continue;
    ran.set(accession, outcome.codes);
    expect(await analyzer.sendResults(accession, outcome.codes, value), `${accession}'s results acknowledged`).toBe('AA');
  }
  return ran;
}

describe('two-way HL7 over TCP and over a socat pseudo-terminal', () => {
  it.each([
    ['display-query', 'law'],
    ['law', 'display-query'],
  ] as const)(
    'TCP %s, serial %s: 50 queries each, every one answered in time, exactly the ordered tests in both sinks, each dispatch once',
    { timeout: 120_000 },
    async (tcpDialect, serialDialect) => {
      const lanes: Lane[] = [
        { id: 'tcp1', dialect: tcpDialect, prefix: 'T' },
        { id: 'pty1', dialect: serialDialect, prefix: 'S' },
      ];
      const sets = lanes.map((l) => fifty(l.prefix));
      const lims: LimsChild = await startLims({
        orders: sets.flatMap((s) => [...s.withOrders, ...s.empty]),
        faults: { slowMs: 3 * DEADLINE, orderFaults: Object.fromEntries(sets.flatMap((s) => s.faults)) },
      });
      cleanups.push(() => lims.stop());
      const pg: TestDatabase = await centralDatabase();
      cleanups.push(() => pg.close());
      const s = await cabledScratch(`hl7-two-way-${tcpDialect}`, cleanups);
      const [httpPort, hl7Port] = [await freePort(), await freePort()];
      const orders = (dialect: EmulatedDialect) => ({ orders: { query: true, dialect, queryTimeoutMs: DEADLINE } });
      const instruments = [
        hl7Instrument('tcp1', { kind: 'tcp-server', host: '127.0.0.1', port: hl7Port }, orders(tcpDialect)),
        hl7Instrument('pty1', { kind: 'serial', path: s.cable.device, baudRate: 115_200 }, { ...orders(serialDialect), framing: 'mllp' }),
      ];
      const gateway = new GatewayChild(writeConfig({ dir: s.dir, httpPort, instruments, lims, pg }), httpPort, s.dir);
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start();
      const tcp = await tcpLink(hl7Port);
      cleanups.push(() => tcp.close());
      const port = await s.cable.openAnalyzer();
      cleanups.push(() => port.close());
      const links: AnalyzerLink[] = [tcp.link, port];
      lanes.forEach((l, i) => (l.analyzer = new Hl7QueryingAnalyzer(links[i]!, l.dialect)));

      // Both analyzers at once: one instrument's queries never wait for the other's.
      const ran = await Promise.all(lanes.map((l, i) => queryAll(l.analyzer!, sets[i]!.accessions)));

      for (const [i, set] of sets.entries()) {
        // Answered with orders: the 30 the LIMS answered in time, each with exactly the tests this instrument can run.
        const served = set.withOrders.slice(0, 30);
        expect([...ran[i]!.keys()], lanes[i]!.id).toEqual(served.map((sp) => sp.accession));
        for (const sp of served) expect(ran[i]!.get(sp.accession)!.slice().sort(), sp.accession).toEqual(expressibleCodes(sp).sort());
      }
      await gateway.drained();
      // Each expressible order of the 30 reached the LIMS as one dispatch; none of another instrument's, none of the 20.
      const expected = lanes.flatMap((l, i) =>
        sets[i]!.withOrders.slice(0, 30).flatMap((sp) => expressibleCodes(sp).map((_, j) => `${sp.accession}-o${j}|${l.id}`)),
      );
      const dispatches = async () => (await fetch(`${lims.url}/_admin/dispatches`)).json() as Promise<Record<string, number>>;
      await until(async () => Object.keys(await dispatches()).length >= expected.length, 15_000, 'every dispatch');
      expect(await dispatches()).toEqual(Object.fromEntries(expected.sort().map((k) => [k, 1])));

      const status = (await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as { instruments: { id: string; orders?: unknown }[] };
      for (const l of lanes)
        expect(status.instruments.find((i) => i.id === l.id)?.orders, l.id).toEqual({
          queries: 50,
          answeredWithOrders: 30,
          answersFailed: 0,
          downloads: 0,
          noInformation: [
            { reason: 'no-orders', count: 10 },
            { reason: 'lims-timeout', count: 5 },
            { reason: 'lims-unavailable', count: 5 },
          ],
        });
      const page = await (await fetch(`http://127.0.0.1:${httpPort}/`)).text();
      expect(page).toContain('LIMS too slow 5');
      expect(page).not.toMatch(/Doe|Jane|P-\d/);
      const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
      for (const l of lanes) {
        expect(metrics).toContain(`labgate_host_queries_total{instrument="${l.id}"} 50`);
        expect(metrics).toContain(`labgate_query_answers_total{instrument="${l.id}",answer="orders",reason=""} 30`);
        expect(metrics).toContain(`labgate_query_answers_total{instrument="${l.id}",answer="no-information",reason="lims-unavailable"} 5`);
      }
      expect(await gateway.kill('SIGTERM')).toMatchObject({ code: 0 });
      expect(readFileSync(gateway.log, 'utf8')).not.toMatch(/Doe|Jane|"P-\d/);

      // Results for exactly the ordered tests, each in both sinks once.
      const view = readStore(gateway.dataDir);
      const stored = new Map<string, number>();
      for (const r of view.results) stored.set(r.accession, (stored.get(r.accession) ?? 0) + 1);
      const runs = new Map(ran.flatMap((m) => [...m].map(([a, codes]) => [a, codes.length] as const)));
      expect(stored).toEqual(runs);
      await expectDeliveredOnce(view, pg, lims);
    },
  );

  it(
    'SIGKILL while an answer is on the wire (serial, law): the analyzer re-queries after the restart and gets it; its orders are dispatched once',
    { timeout: 60_000 },
    async () => {
      const specimen = ordersOf('K1', 1);
      const lims = await startLims({ orders: [specimen] });
      cleanups.push(() => lims.stop());
      const s = await cabledScratch('hl7-kill-answer', cleanups);
      const httpPort = await freePort();
      const instrument = hl7Instrument(
        'pty1',
        { kind: 'serial', path: s.cable.device, baudRate: 115_200 },
        { orders: { query: true, dialect: 'law', queryTimeoutMs: DEADLINE } },
      );
      const gateway = new GatewayChild(writeConfig({ dir: s.dir, httpPort, instruments: [instrument], lims }), httpPort, s.dir);
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start();
      const port = await s.cable.openAnalyzer();
      cleanups.push(() => port.close());
      const analyzer = new Hl7QueryingAnalyzer(port, 'law');
      let killed: Promise<unknown> | undefined;
      // The OML^O33 has arrived and is not accepted: the gateway dies before any ORL^O34 could reach it.
      analyzer.stallNext = () => (killed = gateway.kill('SIGKILL'));
      expect(await analyzer.query('K1', DEADLINE)).toMatchObject({ kind: 'answered', found: true, codes: [] });
      await killed;
      expect(readStore(gateway.dataDir).captures.filter((c) => c.status === 'accepted')).toHaveLength(1);
      await gateway.start();
      await until(async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'pty1')?.state === 'connected', 10_000, 'pty1 open again');
      const again = await analyzer.query('K1', DEADLINE);
      expect(again.kind === 'answered' && again.codes.slice().sort()).toEqual(expressibleCodes(specimen).sort());
      const dispatches = async () => (await fetch(`${lims.url}/_admin/dispatches`)).json() as Promise<Record<string, number>>;
      await until(async () => Object.keys(await dispatches()).length === 2, 10_000, 'the dispatches');
      expect(await dispatches()).toEqual({ 'K1-o0|pty1': 1, 'K1-o1|pty1': 1 });
    },
  );

  it(
    'LAW download mode across a restart (TCP): each pending specimen reaches the analyzer as OML^O33, at most one of them twice; each dispatch once',
    { timeout: 60_000 },
    async () => {
      const specimens = Array.from({ length: 20 }, (_, i) => ordersOf(`D${String(i).padStart(2, '0')}`, i));
      const lims = await startLims({ orders: specimens });
      cleanups.push(() => lims.stop());
      const s = await cabledScratch('hl7-download', cleanups);
      const [httpPort, hl7Port] = [await freePort(), await freePort()];
      const instrument = hl7Instrument(
        'tcp1',
        { kind: 'tcp-server', host: '127.0.0.1', port: hl7Port },
        { orders: { download: true, dialect: 'law', pollIntervalMs: 1_000 } },
      );
      const gateway = new GatewayChild(writeConfig({ dir: s.dir, httpPort, instruments: [instrument], lims }), httpPort, s.dir);
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start();
      const received: string[] = [];
      const connect = async (): Promise<Hl7QueryingAnalyzer> => {
        const tcp = await tcpLink(hl7Port);
        cleanups.push(() => tcp.close());
        return new Hl7QueryingAnalyzer(tcp.link, 'law');
      };
      const first = await connect();
      await until(() => first.downloads.length >= 8, 20_000, 'eight downloads');
      await gateway.kill('SIGKILL');
      received.push(...first.downloads.map((d) => d.accession));
      await gateway.start();
      const second = await connect();
      await until(() => new Set([...received, ...second.downloads.map((d) => d.accession)]).size === 20, 30_000, 'every specimen downloaded');
      // One more poll finds nothing left to send.
      await new Promise((r) => setTimeout(r, 2_500));
      received.push(...second.downloads.map((d) => d.accession));
      expect(received.length - new Set(received).size, 'resent work orders').toBeLessThanOrEqual(1);
      for (const d of [...first.downloads, ...second.downloads])
        expect(d.codes.slice().sort(), d.accession).toEqual(expressibleCodes(specimens.find((sp) => sp.accession === d.accession)!).sort());
      const expected = specimens.flatMap((sp) => expressibleCodes(sp).map((_, j) => `${sp.accession}-o${j}|tcp1`)).sort();
      const dispatches = async () => (await fetch(`${lims.url}/_admin/dispatches`)).json() as Promise<Record<string, number>>;
      await until(async () => Object.keys(await dispatches()).length === expected.length, 15_000, 'every dispatch');
      // Each order dispatched once: a PUT the drain made just before the kill, its outcome not yet marked, is made again
      // after the restart and is the LIMS's replay of the same dispatch (idempotent by order and instrument), never another.
      expect(Object.keys(await dispatches()).sort()).toEqual(expected);
    },
  );

  it(
    "the analyzer's own order port (display-query, orders.orderPort): labgate connects back, answers there and reads the ACK^Q03 there; results on the instrument's connection, each dispatch once",
    { timeout: 60_000 },
    async () => {
      const specimen = ordersOf('P1', 2);
      const lims = await startLims({ orders: [specimen] });
      cleanups.push(() => lims.stop());
      const s = await cabledScratch('hl7-order-port', cleanups);
      const [httpPort, hl7Port, orderPortNumber] = [await freePort(), await freePort(), await freePort()];
      // The analyzer's order port: a real TCP server; each connection labgate opens becomes the emulator's order link.
      const sockets: Socket[] = [];
      const server = createServer((socket) => {
        socket.on('error', () => {});
        sockets.push(socket);
      });
      await new Promise<void>((resolve) => server.listen(orderPortNumber, '127.0.0.1', resolve));
      cleanups.push(() => new Promise<void>((resolve) => (sockets.forEach((c) => c.destroy()), server.close(() => resolve()))));
      const instrument = hl7Instrument(
        'tcp1',
        { kind: 'tcp-server', host: '127.0.0.1', port: hl7Port },
        { orders: { query: true, dialect: 'display-query', queryTimeoutMs: DEADLINE, orderPort: { host: '127.0.0.1', port: orderPortNumber } } },
      );
      const gateway = new GatewayChild(writeConfig({ dir: s.dir, httpPort, instruments: [instrument], lims }), httpPort, s.dir);
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start();
      const tcp = await tcpLink(hl7Port);
      cleanups.push(() => tcp.close());
      const seenOnInstrument: Buffer[] = [];
      tcp.link.onData((d) => seenOnInstrument.push(d));
      const analyzer = new Hl7QueryingAnalyzer(tcp.link, 'display-query');
      await until(() => sockets.length === 1, 10_000, 'labgate connected to the order port');
      const orderSocket = sockets[0]!;
      analyzer.orderLink({ write: (d) => orderSocket.write(d), onData: (l) => orderSocket.on('data', l) });
      const outcome = await analyzer.query('P1', DEADLINE);
      expect(outcome.kind === 'answered' && outcome.codes.slice().sort()).toEqual(expressibleCodes(specimen).sort());
      // Nothing of the answer came on the instrument's connection.
      expect(Buffer.concat(seenOnInstrument).toString('latin1')).toBe('');
      expect(await analyzer.sendResults('P1', expressibleCodes(specimen), value)).toBe('AA');
      const dispatches = async () => (await fetch(`${lims.url}/_admin/dispatches`)).json() as Promise<Record<string, number>>;
      const expected = expressibleCodes(specimen).map((_, j) => `P1-o${j}|tcp1`);
      await until(async () => Object.keys(await dispatches()).length === expected.length, 10_000, 'the dispatches');
      expect(await dispatches()).toEqual(Object.fromEntries(expected.map((k) => [k, 1])));
      expect(await gateway.kill('SIGTERM')).toMatchObject({ code: 0 });
      expect(readStore(gateway.dataDir).results.filter((r) => r.accession === 'P1')).toHaveLength(expected.length);
    },
  );
});
