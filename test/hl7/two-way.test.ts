// The HL7 runner in two-way mode, in-process, in both dialects: the emulated analyzer on one end of an in-memory
// cable, the runner with a real store and the real LIMS test server on the other. A query is journaled and answered
// (QCK^Q02 + DSR^Q03, or RSP^K11 + OML^O33) with exactly the orders the instrument can run, recorded for dispatch only
// once the analyzer accepted them; "no orders" and a LIMS too slow are answered NF in time; results never wait behind
// a query; the answer speaks the query's own delimiters; LAW downloads go out as OML^O33, each once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Hl7QueryingAnalyzer, type EmulatedDialect } from '../../drivers/hl7/emulator-query.js';
import { hl7Options, type Hl7OptionsInput } from '../../drivers/hl7/options.js';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import { systemClock } from '../../src/clock.js';
import type { TestSpecimen } from '../../src/lims-server/server.js';
import { silentLog } from '../../src/log.js';
import type { InboundMessage } from '../../src/message.js';
import type { DriverEvent, DriverRunner, IngestOutcome } from '../../src/runner-contract.js';
import type { OrdersClient } from '../../src/sinks/lims-orders.js';
import { startOrdersLims, type OrdersLims } from '../fixtures/orders-lims.js';
import type { Store } from '../../src/store/store.js';
import { transportPair } from '../astm/pair.js';
import { until } from '../fixtures/until.js';
import { scratchPerTest } from '../store/store-fixtures.js';
import { mllp } from './mnemonic.js';

const mapping = [
  { code: 'GLU', loinc: '2345-7' },
  { code: 'NA', loinc: '2951-2' },
  { code: 'K', loinc: '2823-3' },
];
const o = (orderId: string, loinc: string, priority: 'routine' | 'stat' = 'routine') => ({ orderId, loinc, orderedAt: '2026-07-01T08:00:00Z', priority });
const specimens: TestSpecimen[] = [
  {
    accession: 'S1',
    orders: [o('a1', '2345-7', 'stat'), o('a2', '2823-3'), o('a3', '718-7')],
    patient: { id: 'P-1', name: 'Doe^Jane', birthDate: '1970-01-02', sex: 'F' },
  },
  { accession: 'SLOW', orders: [o('c1', '2951-2')] },
  { accession: 'D1', orders: [o('d1', '2951-2')] },
  { accession: 'D2', orders: [o('d2', '2345-7'), o('d3', '718-7')] },
  // Nothing this instrument can run: never downloaded.
  { accession: 'D3', orders: [o('d4', '718-7')] },
  // An accession a Latin-1 analyzer cannot be sent exactly (ł): left out of every download, never sent as `Sl` or `S?`.
  { accession: 'S\u0142', orders: [o('d5', '2345-7')] },
];

let client: OrdersClient;
let lims: OrdersLims;
const scratch = scratchPerTest();
const runners: DriverRunner[] = [];

beforeAll(async () => {
  lims = await startOrdersLims(specimens, { SLOW: 'slow' }, 10_000);
  client = lims.client;
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await lims.close();
});

function setup(dialect: EmulatedDialect, orders: Hl7OptionsInput['orders'] = {}, charset: Hl7OptionsInput['charset'] = 'auto') {
  const store: Store = scratch().open({ now: Date.now });
  const { analyzer, gateway } = transportPair();
  const written: string[] = [];
  gateway.onWrite((d) => written.push(d.toString('latin1')));
  const events: DriverEvent[] = [];
  const ingest = (m: InboundMessage): IngestOutcome => ({ kind: 'committed', summary: store.ingest(m), rejections: m.rejections });
  const runner = createHl7Runner(
    {
      profile: { id: 'chem-1', gatewayId: 'gw-test', timezone: 'UTC', mapping },
      transport: gateway,
      ingest,
      accepting: () => true,
      clock: systemClock,
      log: silentLog,
      onEvent: (e) => events.push(e),
      orders: { source: client, ledger: store.orders },
    },
    hl7Options({ accession: ['OBR-2.1', 'SPM-2.1.1'], charset, orders: { query: true, queryTimeoutMs: 2_000, dialect, ...orders } }),
  );
  runner.start();
  runners.push(runner);
  const emulated = new Hl7QueryingAnalyzer({ write: (d) => analyzer.write(d), onData: (l) => analyzer.onData(l) }, dialect);
  return { store, events, written, emulated, analyzer };
}

const figures = (events: DriverEvent[]): string[] => events.flatMap((e) => (e.kind === 'orders' ? [e.figure] : []));

describe.each(['display-query', 'law'] as const)('HL7 two-way runner, %s', (dialect) => {
  it('a query is journaled and answered with the orders this instrument can run; dispatched once accepted; the results of exactly those arrive', async () => {
    const { store, events, emulated } = setup(dialect);
    const outcome = await emulated.query('S1', 2_000);
    expect(outcome).toMatchObject({ kind: 'answered', found: true, codes: ['GLU', 'K'] });
    expect(store.rejectedCaptures(10)).toEqual([]);
    expect(store.counts().capturesAccepted).toBe(1);
    await until(() => store.orders.dispatches.counts().pending === 2);
    expect(await emulated.sendResults('S1', ['GLU', 'K'], () => '4.2')).toBe('AA');
    expect(
      store
        .recentResults(10)
        .map((r) => r.analyteLoinc)
        .sort(),
    ).toEqual(['2345-7', '2823-3']);
    expect(figures(events)).toEqual(['queries', 'answered-orders']);
  });

  it('no orders, and a LIMS too slow for the deadline: NF before it, counted with the reason, nothing dispatched', async () => {
    const { store, events, emulated } = setup(dialect);
    expect(await emulated.query('NOPE', 2_000)).toMatchObject({ kind: 'answered', found: false });
    const slow = await emulated.query('SLOW', 2_000);
    expect(slow).toMatchObject({ kind: 'answered', found: false });
    expect(slow.kind === 'answered' && slow.completeAfterMs).toBeLessThan(2_000);
    expect(figures(events)).toEqual(['queries', 'no-information:no-orders', 'queries', 'no-information:lims-timeout']);
    expect(store.orders.dispatches.counts().pending).toBe(0);
  });

  it('results sent while an answer waits for a slow LIMS are committed and acknowledged at once, not behind the answer', async () => {
    const { store, emulated } = setup(dialect, { queryTimeoutMs: 3_000 });
    const asked = emulated.query('SLOW', 3_000);
    await new Promise((r) => setTimeout(r, 100));
    const before = Date.now();
    expect(await emulated.sendResults('R9', ['NA'], () => '140')).toBe('AA');
    expect(Date.now() - before).toBeLessThan(1_000);
    expect(store.recentResults(10).map((r) => r.accession)).toEqual(['R9']);
    expect(await asked).toMatchObject({ kind: 'answered', found: false });
  });

  it('an analyzer that does not accept the order message: not recorded as sent, counted as failed', async () => {
    const { store, events, emulated } = setup(dialect, { ackTimeoutMs: 1_000 });
    emulated.stallNext = () => {};
    expect(await emulated.query('S1', 2_000)).toMatchObject({ kind: 'answered', found: true, codes: [] });
    await until(() => figures(events).includes('answers-failed'), 3_000);
    expect(store.orders.dispatches.counts().pending).toBe(0);
  });
});

describe('HL7 two-way runner, the wire', () => {
  it("the answer speaks the query's own delimiters; patient data only when asked; a query of the other dialect is rejected with its reason", async () => {
    const { written, events, analyzer, store } = setup('display-query', { patient: true });
    analyzer.onData(() => {});
    const qry = ['MSH#$%@&#Emu#BS###20260701120000##QRY$Q02#Q7#P#2.3.1', 'QRD#20260701120000#R#D#1###RD#S1#OTH###T#', 'QRF#BS#####RCT#COR#ALL##'];
    await analyzer.write(mllp(qry.join('\r') + '\r'));
    await until(() => written.some((w) => w.includes('DSR$Q03')), 3_000);
    const dsr = written.find((w) => w.includes('DSR$Q03'))!;
    expect(written[0]).toContain('QAK#SR#OK');
    expect(dsr).toContain('DSP#21##S1##');
    expect(dsr).toContain('DSP#24##Y##');
    expect(dsr).toContain('DSP#29##GLU$$$##');
    expect(dsr).toContain('DSP#3##Doe^Jane##');
    await analyzer.write(mllp(['MSH|^~\\&|Emu|LAB|||20260701120000||QBP^Q11|Q8|P|2.5.1', 'QPD|WOS|T1|S1'].join('\r') + '\r'));
    await until(() => store.rejectedCaptures(10).length === 1, 3_000);
    expect(store.rejectedCaptures(10)[0]?.reasons.map((r) => r.reason)).toEqual([
      "host query QBP^Q11 not answered: this instrument's orders dialect is display-query",
    ]);
    expect(figures(events)).toEqual(['queries']);
  });

  it('a query naming two specimens: one DSR^Q03 each; the analyzer accepts the first and rejects the second: only the first is recorded as sent', async () => {
    const { written, events, analyzer, store } = setup('display-query');
    analyzer.onData(() => {});
    const qry = ['MSH|^~\\&|Emu|BS|||20260701120000||QRY^Q02|Q9|P|2.3.1', 'QRD|20260701120000|R|D|1|||RD|S1~D1|OTH|||T|', 'QRF|BS||||RCT|COR|ALL||'];
    await analyzer.write(mllp(qry.join('\r') + '\r'));
    await until(() => written.filter((w) => w.includes('DSR^Q03')).length === 2, 3_000);
    const controlIds = written.filter((w) => w.includes('DSR^Q03')).map((w) => w.split('\r')[0]!.split('|')[9]!);
    expect(written.filter((w) => w.includes('DSR^Q03')).map((w) => /DSP\|21\|\|(\w+)/.exec(w)?.[1])).toEqual(['S1', 'D1']);
    const ack = (code: string, id: string) => mllp(['MSH|^~\\&|Emu|BS|||20260701120001||ACK^Q03|A' + id + '|P|2.3.1', `MSA|${code}|${id}`].join('\r') + '\r');
    await analyzer.write(ack('AA', controlIds[0]!));
    await analyzer.write(ack('AE', controlIds[1]!));
    await until(() => store.orders.dispatches.counts().pending === 2, 3_000);
    expect(figures(events)).toEqual(['queries', 'answered-orders']);
    // The acknowledgments were taken by two-way: never journaled, never answered.
    expect(store.counts().capturesAccepted).toBe(1);
    expect(written.filter((w) => w.includes('ACK^'))).toEqual([]);
  });

  it('LAW download mode: each pending specimen the instrument can run and be sent exactly goes out once as OML^O33, accepted by ORL^O34, and is dispatched', async () => {
    const { store, emulated, events } = setup('law', { query: false, download: true, pollIntervalMs: 1_000 }, 'latin1');
    await until(() => emulated.downloads.length >= 4, 8_000);
    expect(emulated.downloads.map((d) => [d.accession, d.codes])).toEqual(
      expect.arrayContaining([
        ['S1', ['GLU', 'K']],
        ['SLOW', ['NA']],
        ['D1', ['NA']],
        ['D2', ['GLU']],
      ]),
    );
    await until(() => store.orders.dispatches.counts().pending === 5, 3_000);
    // The next polls find nothing left to send.
    await new Promise((r) => setTimeout(r, 2_200));
    expect(emulated.downloads.map((d) => d.accession).sort()).toEqual(['D1', 'D2', 'S1', 'SLOW']);
    expect(figures(events)).toContain('specimens-left-out');
    expect(store.orders.sentOf('chem-1', ['d5']).size).toBe(0);
  });
});
