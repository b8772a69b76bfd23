// Two-way ASTM end to end: `labgate run` as a child process on a socat pseudo-terminal with the native serial binding,
// the LIMS test server as its own process, the emulated analyzer in query mode on the far end of the cable. Every query
// is answered before the analyzer's deadline whatever the LIMS does, the analyzer runs exactly the ordered tests, and
// each order's dispatch reaches the LIMS once; contention, a SIGKILL while an answer is on the wire, and download mode
// across a restart.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { QueryingAnalyzer, readAnswer, resultsMessage } from '../../drivers/astm/emulator-query.js';
import { AnalyzerReceiver } from '../../drivers/astm/emulator-receiver.js';
import { systemClock } from '../../src/clock.js';
import type { TestSpecimen } from '../../src/lims-server/server.js';
import { astmCodes, astmInstrument, ordersOf, OTHER_LOINC } from './analyzers.js';
import { cabledScratch, freePort, GatewayChild, startLims, until, type LimsChild } from './harness.js';
import { writeConfig } from './harness.js';
import { readStore } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const DEADLINE = 3_000;
const OTHER = OTHER_LOINC;
const value = (accession: string, code: string): string => `${accession.length}.${astmCodes.indexOf(code as (typeof astmCodes)[number])}`;

/** A LIMS, a cable, a two-way gateway on it, and the analyzer in query mode on the far end. */
async function rig(name: string, lims: LimsChild, orders: object) {
  const s = await cabledScratch(name, cleanups);
  const cable = s.cable;
  const httpPort = await freePort();
  const instrument = { ...astmInstrument('chem1', cable.device, astmCodes), options: { orders } };
  const config = writeConfig({ dir: s.dir, httpPort, instruments: [instrument], lims });
  const gateway = new GatewayChild(config, httpPort, s.dir);
  cleanups.push(() => gateway.stopIfRunning());
  await gateway.start();
  const port = await cable.openAnalyzer();
  cleanups.push(() => port.close());
  await until(async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')?.state === 'connected', 10_000, 'chem1 connected');
  const emulator = new AstmEmulator(port, systemClock, { replyTimeoutMs: 2_000, maxRestarts: 3, busyRetryMs: 100 });
  const receiver = new AnalyzerReceiver(port, systemClock);
  return { gateway, emulator, receiver, analyzer: new QueryingAnalyzer(emulator, receiver, systemClock) };
}

async function limsWith(specimens: TestSpecimen[], orderFaults: Record<string, string> = {}): Promise<LimsChild> {
  const lims = await startLims({ orders: specimens, faults: { slowMs: 2 * DEADLINE, orderFaults } });
  cleanups.push(() => lims.stop());
  return lims;
}

async function dispatches(lims: LimsChild): Promise<Record<string, number>> {
  return (await fetch(`${lims.url}/_admin/dispatches`)).json() as Promise<Record<string, number>>;
}

describe('two-way ASTM over a socat pseudo-terminal', () => {
  it(
    '50 queries: orders for 40, none for 10, 5 too slow and 5 answering 503; every one answered in time, exactly the ordered tests run, each dispatch once',
    { timeout: 180_000 },
    async () => {
      const accessions = Array.from({ length: 50 }, (_, i) => `Q${String(i).padStart(3, '0')}`);
      const withOrders = accessions.slice(0, 40).map(ordersOf);
      const faults = Object.fromEntries([...accessions.slice(30, 35).map((a) => [a, 'slow']), ...accessions.slice(35, 40).map((a) => [a, '503'])]);
      // Ten without orders: five the LIMS knows with an empty list, five it does not know (404).
      const lims = await limsWith([...withOrders, ...accessions.slice(40, 45).map((accession) => ({ accession, orders: [] }))], faults);
      const { gateway, analyzer } = await rig('query50', lims, { query: true, queryTimeoutMs: DEADLINE });
      const ran = new Map<string, string[]>();
      const terminations: string[] = [];
      for (const accession of accessions) {
        const outcome = await analyzer.query([accession], DEADLINE);
        expect(outcome.kind, `${accession} answered before the analyzer's deadline`).toBe('answered');
        if (outcome.kind !== 'answered') continue;
        terminations.push(outcome.termination);
        const codes = outcome.orders.get(accession) ?? [];
        if (codes.length > 0) ran.set(accession, codes);
        expect((await analyzer.runOrdered(outcome.orders, value)).kind).toBe('sent');
      }
      // Answered with orders: the 30 the LIMS answered in time, each with exactly the tests this instrument can run.
      const served = withOrders.slice(0, 30);
      expect([...ran.keys()]).toEqual(served.map((s) => s.accession));
      for (const s of served)
        expect(ran.get(s.accession)!.slice().sort(), s.accession).toEqual(
          s.orders
            .filter((o) => o.loinc !== OTHER)
            .map((o) => astmCodes[Number(o.loinc[4])])
            .sort(),
        );
      expect(terminations.filter((t) => t === 'I')).toHaveLength(20);
      await gateway.drained();
      const view = readStore(gateway.dataDir);
      const stored = new Map<string, string[]>();
      for (const r of view.results) stored.set(r.accession, [...(stored.get(r.accession) ?? []), r.dedupKey]);
      expect([...stored.keys()].sort()).toEqual([...ran.keys()].sort());
      for (const [accession, codes] of ran) expect(stored.get(accession), accession).toHaveLength(codes.length);
      // Each expressible order of the 30 reached the LIMS as one dispatch; none of another instrument's, none of the 20.
      const expected = served.flatMap((s) => s.orders.filter((o) => o.loinc !== OTHER).map((o) => `${o.orderId}|chem1`)).sort();
      await until(async () => Object.keys(await dispatches(lims)).length === expected.length, 15_000, 'every dispatch');
      expect(Object.keys(await dispatches(lims)).sort()).toEqual(expected);
      // The day's figures say what happened and why, on the status page and in /metrics; no patient data on the page.
      const status = (await (await fetch(`http://127.0.0.1:${gateway.httpPort}/status.json`)).json()) as { instruments: { id: string; orders?: unknown }[] };
      expect(status.instruments.find((i) => i.id === 'chem1')?.orders).toEqual({
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
      const page = await (await fetch(`http://127.0.0.1:${gateway.httpPort}/`)).text();
      expect(page).toContain('LIMS too slow 5');
      expect(page).not.toMatch(/Doe|Jane|P-\d/);
      const metrics = await (await fetch(`http://127.0.0.1:${gateway.httpPort}/metrics`)).text();
      expect(metrics).toContain('labgate_host_queries_total{instrument="chem1"} 50');
      expect(metrics).toContain('labgate_query_answers_total{instrument="chem1",answer="orders",reason=""} 30');
      expect(metrics).toContain('labgate_query_answers_total{instrument="chem1",answer="no-information",reason="lims-unavailable"} 5');
      expect(readFileSync(gateway.log, 'utf8')).not.toMatch(/Doe|Jane|"P-\d/);
    },
  );

  it('contention: the analyzer bids as labgate does; its results go first, then the answer arrives in time', { timeout: 60_000 }, async () => {
    const lims = await limsWith([ordersOf('C1', 1)]);
    const { gateway, emulator, receiver, analyzer } = await rig('contention', lims, { query: true, queryTimeoutMs: DEADLINE });
    let results: Promise<unknown> | undefined;
    receiver.contendNext(() => {
      results = emulator.send([resultsMessage('C0', ['GLU', 'NA'], Date.now(), () => '5.5')], { contended: true });
    });
    const outcome = await analyzer.query(['C1'], DEADLINE);
    expect(results, 'the analyzer contended').toBeDefined();
    expect(await results).toMatchObject({ kind: 'sent' });
    expect(outcome).toMatchObject({ kind: 'answered', termination: 'N' });
    expect(outcome.kind === 'answered' && outcome.orders.get('C1')?.length).toBe(2);
    await until(() => readStore(gateway.dataDir).results.filter((r) => r.accession === 'C0').length === 2, 5_000, 'the contended results stored');
  });

  it('SIGKILL while an answer is on the wire: the analyzer re-queries and gets it; its orders are dispatched once', { timeout: 90_000 }, async () => {
    const lims = await limsWith([ordersOf('K1', 1)]);
    const { gateway, receiver, analyzer } = await rig('kill-answer', lims, { query: true, queryTimeoutMs: DEADLINE });
    let killed: Promise<unknown> | undefined;
    receiver.stallNext(() => {
      killed = gateway.kill('SIGKILL');
    });
    expect(await analyzer.query(['K1'], DEADLINE)).toEqual({ kind: 'missed' });
    await killed;
    expect(readStore(gateway.dataDir).captures.filter((c) => c.status === 'accepted')).toHaveLength(1);
    receiver.resume();
    await gateway.start();
    await until(
      async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')?.state === 'connected',
      10_000,
      'chem1 connected again',
    );
    const again = await analyzer.query(['K1'], DEADLINE);
    expect(again.kind === 'answered' && again.orders.get('K1')?.length).toBe(2);
    await until(async () => Object.keys(await dispatches(lims)).length === 2, 10_000, 'the dispatches');
    expect(await dispatches(lims)).toEqual({ 'K1-o0|chem1': 1, 'K1-o1|chem1': 1 });
  });

  it('download mode across a restart: each pending specimen reaches the analyzer, at most one of them twice', { timeout: 90_000 }, async () => {
    const specimens = Array.from({ length: 20 }, (_, i) => ordersOf(`D${String(i).padStart(2, '0')}`, i));
    const lims = await limsWith(specimens);
    const { gateway, receiver } = await rig('download', lims, { download: true, pollIntervalMs: 1_000 });
    const received: string[] = [];
    const collect = async (until: () => boolean): Promise<void> => {
      while (!until()) {
        const m = await receiver.next(10_000);
        if (!m) throw new Error(`no download within 10 s after ${received.length}`);
        received.push(...readAnswer(m.text.toString('latin1')).orders.keys());
      }
    };
    await collect(() => received.length >= 8);
    await gateway.kill('SIGKILL');
    await gateway.start();
    await collect(() => new Set(received).size === 20);
    // One more poll finds nothing left to send.
    await new Promise((r) => setTimeout(r, 2_500));
    while (receiver.waiting > 0) received.push(...readAnswer((await receiver.next(0))!.text.toString('latin1')).orders.keys());
    expect(received.length - new Set(received).size, 'resent messages').toBeLessThanOrEqual(1);
    const expected = specimens.flatMap((s) => s.orders.filter((o) => o.loinc !== OTHER).map((o) => `${o.orderId}|chem1`)).sort();
    await until(async () => Object.keys(await dispatches(lims)).length === expected.length, 15_000, 'every dispatch');
    expect(Object.keys(await dispatches(lims)).sort()).toEqual(expected);
  });
});
