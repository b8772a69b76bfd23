// The ASTM runner in two-way mode, in-process: the emulated analyzer on one end of an in-memory cable, the runner with a
// real store and the real LIMS test server on the other. Queries answered with orders or "no information", results for
// exactly the ordered tests, contention, download mode, and a Q record journaled like any message.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { QueryingAnalyzer, readAnswer, resultsMessage } from '../../drivers/astm/emulator-query.js';
import { AnalyzerReceiver } from '../../drivers/astm/emulator-receiver.js';
import type { AstmOptionsInput } from '../../drivers/astm/options.js';
import { createAstmRunner } from '../../drivers/astm/runner.js';
import { systemClock } from '../../src/clock.js';
import type { LimsServer, TestSpecimen } from '../../src/lims-server/server.js';
import { silentLog } from '../../src/log.js';
import type { InboundMessage } from '../../src/message.js';
import type { DriverEvent, DriverRunner, IngestOutcome } from '../../src/runner-contract.js';
import type { OrdersClient } from '../../src/sinks/lims-orders.js';
import { startOrdersLims, type OrdersLims } from '../fixtures/orders-lims.js';
import type { Store } from '../../src/store/store.js';
import { until } from '../fixtures/until.js';
import { scratchPerTest } from '../store/store-fixtures.js';
import { mnemonic } from './mnemonics.js';
import { transportPair } from './pair.js';
import { options, profile } from './profile.js';

const mapping = [
  { code: 'GLU', loinc: '2345-7' },
  { code: 'NA', loinc: '2951-2' },
  { code: 'K', loinc: '2823-3' },
];
const o = (orderId: string, loinc: string) => ({ orderId, loinc, orderedAt: '2026-07-01T08:00:00Z' });
const specimens: TestSpecimen[] = [
  { accession: 'S1', orders: [o('a1', '2345-7'), o('a2', '2823-3'), o('a3', '718-7')] },
  // A Czech name with a crafted tail: cut to its low bytes in Latin-1, č (U+010D) is CR, ż (U+017C) `|` and Ş (U+015E) `^`,
  // so it would end the P record and add an order for another specimen and an early terminator.
  {
    accession: 'S2',
    orders: [o('b1', '2951-2')],
    patient: { id: 'P2', name: 'Nováček\u010dO\u017c1\u017cEVIL\u017c\u017c\u015e\u015e\u015eGLU\u010dL\u017c1\u017cN', birthDate: '', sex: 'U' },
  },
  { accession: 'SLOW', orders: [o('c1', '2951-2')] },
  // An accession a Latin-1 analyzer cannot be sent exactly (ł): left out of every download, never sent as `Sl`.
  { accession: 'S\u0142', orders: [o('d1', '2345-7')] },
];

let server: LimsServer;
let client: OrdersClient;
let lims: OrdersLims;
const scratch = scratchPerTest();
const runners: DriverRunner[] = [];

beforeAll(async () => {
  lims = await startOrdersLims(specimens, { SLOW: 'slow' }, 10_000);
  client = lims.client;
  server = lims.server;
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await lims.close();
});

/** A two-way runner on one end of a cable, the analyzer (emulator, its receiver, query mode) on the other. */
function setup(o: AstmOptionsInput['orders'] = { query: true, queryTimeoutMs: 2_000 }) {
  const store: Store = scratch().open({ now: Date.now });
  const { analyzer, gateway } = transportPair();
  if (process.env.TRACE) {
    analyzer.onWrite((d) => process.stderr.write(`${Date.now() % 100000} A> ${mnemonic(d)}\n`));
    gateway.onWrite((d) => process.stderr.write(`${Date.now() % 100000} G> ${mnemonic(d)}\n`));
  }
  const events: DriverEvent[] = [];
  const ingest = (m: InboundMessage): IngestOutcome => ({ kind: 'committed', summary: store.ingest(m), rejections: m.rejections });
  const runner = createAstmRunner(
    {
      profile: profile(mapping),
      transport: gateway,
      ingest,
      accepting: () => true,
      clock: systemClock,
      log: silentLog,
      onEvent: (e) => events.push(e),
      orders: { source: client, ledger: store.orders },
    },
    options({ orders: o }),
  );
  runner.start();
  runners.push(runner);
  const emulator = new AstmEmulator(analyzer, systemClock, { replyTimeoutMs: 1_000 });
  const receiver = new AnalyzerReceiver(analyzer, systemClock);
  return { store, events, emulator, receiver, analyzer, querying: new QueryingAnalyzer(emulator, receiver, systemClock) };
}

const figures = (events: DriverEvent[]): string[] => events.flatMap((e) => (e.kind === 'orders' ? [e.figure] : []));

describe('ASTM two-way runner', () => {
  it('a query is journaled, answered with the orders this instrument can run, and the results of exactly those arrive', async () => {
    const { store, events, querying } = setup();
    const outcome = await querying.query(['S1', 'NOPE'], 2_000);
    expect(outcome).toMatchObject({ kind: 'answered', termination: 'N' });
    expect(outcome.kind === 'answered' && [...outcome.orders]).toEqual([['S1', ['GLU', 'K']]]);
    expect(store.rejectedCaptures(10)).toEqual([]);
    expect(store.counts().capturesAccepted).toBe(1);
    await until(() => store.orders.dispatches.counts().pending === 2);
    expect((await querying.runOrdered(outcome.kind === 'answered' ? outcome.orders : new Map(), () => '4.2')).kind).toBe('sent');
    expect(
      store
        .recentResults(10)
        .map((r) => r.analyteLoinc)
        .sort(),
    ).toEqual(['2345-7', '2823-3']);
    expect(figures(events)).toEqual(['queries', 'answered-orders']);
  });

  it('no orders: L|1|I; a LIMS too slow for the deadline: L|1|I before it, counted with the reason', async () => {
    const { events, querying } = setup();
    expect(await querying.query(['NOPE'], 2_000)).toMatchObject({ kind: 'answered', termination: 'I' });
    const slow = await querying.query(['SLOW'], 2_000);
    expect(slow).toMatchObject({ kind: 'answered', termination: 'I' });
    expect(slow.kind === 'answered' && slow.completeAfterMs).toBeLessThan(2_000);
    expect(figures(events)).toEqual(['queries', 'no-information:no-orders', 'queries', 'no-information:lims-timeout']);
  });

  it("a patient name the analyzer's charset cannot carry is written with substitutes, inside its own P record", async () => {
    const { events, querying } = setup({ query: true, queryTimeoutMs: 2_000, patient: true });
    const outcome = await querying.query(['S2'], 2_000);
    expect(outcome.kind === 'answered' && [...outcome.orders]).toEqual([['S2', ['NA']]]);
    expect(events).toContainEqual({ kind: 'substituted', characters: 12 });
  });

  it('a Q record naming 5,000 specimens: answered in time from the first 100, the rest refused and counted', async () => {
    const { events, querying } = setup({ query: true, queryTimeoutMs: 3_000, maxSpecimensPerQuery: 100 });
    const before = server.stats().orderLookups;
    const named = ['S1', ...Array.from({ length: 4_999 }, (_, i) => `X${i}`)];
    const outcome = await querying.query(named, 3_000);
    expect(outcome.kind === 'answered' && [...outcome.orders]).toEqual([['S1', ['GLU', 'K']]]);
    expect(server.stats().orderLookups - before).toBe(100);
    expect(figures(events)).toEqual(['queries', 'specimens-over-limit', 'answered-orders']);
  });

  it('query mode off: the Q record is rejected with its reason and nothing is answered', async () => {
    const { store, receiver, querying } = setup({ query: false });
    expect(await querying.query(['S1'], 500)).toEqual({ kind: 'missed' });
    expect(store.rejectedCaptures(10)[0]?.reasons.map((r) => r.reason)).toEqual([expect.stringMatching(/query mode is off/)]);
    expect(receiver.waiting).toBe(0);
  });

  it('contention: the analyzer bids at the same instant; its results are committed first, then the answer comes', async () => {
    const { store, emulator, receiver, querying } = setup();
    let contended: Promise<unknown> | undefined;
    receiver.contendNext(() => {
      contended = emulator.send([resultsMessage('C0', ['NA'], Date.now(), () => '140')], { contended: true });
    });
    const outcome = await querying.query(['S2'], 3_000);
    expect(await contended).toMatchObject({ kind: 'sent' });
    expect(outcome.kind === 'answered' && [...outcome.orders]).toEqual([['S2', ['NA']]]);
    expect(store.recentResults(10).map((r) => r.accession)).toEqual(['C0']);
  });

  it('results sent while an answer waits for a slow LIMS are committed at once, not behind the answer', async () => {
    const { store, emulator, receiver, querying } = setup();
    const asked = querying.query(['SLOW'], 2_000);
    await until(() => store.counts().capturesAccepted === 1);
    expect(await emulator.send([resultsMessage('R0', ['GLU', 'NA'], Date.now(), () => '5')])).toMatchObject({ kind: 'sent', restarts: 0 });
    expect(store.recentResults(10).map((r) => r.accession)).toEqual(['R0', 'R0']);
    // The answer ("no information": the LIMS was too slow) had not come yet, and comes in time after.
    expect(receiver.waiting).toBe(0);
    expect(await asked).toMatchObject({ kind: 'answered', termination: 'I' });
  });

  it('an answer that cannot begin before the deadline (the analyzer holds the line) is dropped and counted, never sent late', async () => {
    const { events, analyzer, receiver, querying } = setup({ query: true, queryTimeoutMs: 1_000 });
    // Whether labgate's bid or the analyzer's ENQ comes first, the analyzer has the line: it never ACKs labgate's bid.
    receiver.contendNext(() => {});
    const asked = querying.query(['S1'], 1_000);
    // The analyzer opens another transfer right after its query and keeps the line.
    await until(() => figures(events).includes('queries'));
    await analyzer.write(Buffer.from([0x05]));
    expect(await asked).toEqual({ kind: 'missed' });
    await until(() => figures(events).includes('answers-failed'));
    expect(figures(events)).toEqual(['queries', 'answers-failed']);
  });

  it('a query the analyzer cancels (Q.13 A) is not answered', async () => {
    const { events, emulator, receiver } = setup();
    receiver.contendNext(() => {});
    expect(await emulator.send(['H|\\^&\rQ|1|^S1||^^^ALL||||||||A\rL|1|N\r'])).toMatchObject({ kind: 'sent' });
    expect(await receiver.next(700)).toBeNull();
    expect(figures(events)).toEqual([]);
  });

  it('download mode: each pending specimen the instrument can run and be sent exactly, once', async () => {
    const { store, events, receiver } = setup({ download: true, pollIntervalMs: 1_000 });
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = await receiver.next(5_000);
      if (m) got.push(...readAnswer(m.text.toString('latin1')).orders.keys());
    }
    expect(got).toEqual(['S1', 'S2', 'SLOW']);
    expect(await receiver.next(2_500)).toBeNull();
    expect(store.orders.dispatches.counts().pending).toBe(4);
    expect(figures(events)).toContain('specimens-left-out');
  });
});
