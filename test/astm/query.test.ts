// Q records → queries, and orders → the H/P/O/L records an analyzer is sent (LIS2-A2), both ways through the codec.
import { describe, expect, it } from 'vitest';
import type { AstmOptionsInput } from '../../drivers/astm/options.js';
import { encodeRecords, type RecordValue } from '../../drivers/astm/encode.js';
import { noInformationMessage as noInformationRecords, ordersMessage as ordersRecords, type OutgoingContext } from '../../drivers/astm/order-records.js';
import { readQuery } from '../../drivers/astm/query.js';
import { parseRecords, standardDelimiters } from '../../drivers/astm/records.js';
import type { InstrumentSpecimen } from '../../src/orders/order.js';
import { options } from './profile.js';

const q = (record: string, o: AstmOptionsInput = {}) => {
  const m = parseRecords(`H|\\^&\r${record}\rL|1\r`)[0]!;
  return readQuery(m.queries[0]!, options(o));
};

describe('ASTM host query (Q) records', () => {
  it.each([
    [
      'one specimen id in component 2 (LIS2-A2 11.1.3)',
      'Q|1|^S100||^^^ALL||||||||O',
      { specimens: [{ kind: 'id', accession: 'S100' }], tests: 'all', request: 'orders', requestCode: 'O' },
    ],
    [
      'several specimens as repeats',
      'Q|1|^S1\\^S2\\^S1||^^^ALL',
      {
        specimens: [
          { kind: 'id', accession: 'S1' },
          { kind: 'id', accession: 'S2' },
        ],
        tests: 'all',
        request: 'orders',
      },
    ],
    ['a range with an ending id (11.1.4)', 'Q|1|^100|^200|^^^ALL', { specimens: [{ kind: 'range', from: '100', to: '200' }] }],
    ['the same id at both ends is one specimen', 'Q|1|^100|^100|', { specimens: [{ kind: 'id', accession: '100' }] }],
    ['ALL specimens', 'Q|1|ALL||^^^ALL', { specimens: [{ kind: 'all' }] }],
    ['ALL in the specimen component', 'Q|1|^ALL', { specimens: [{ kind: 'all' }] }],
    ['named tests, read as R.3 is', 'Q|1|^S1||^^^GLU\\^^^NA', { tests: ['GLU', 'NA'] }],
    ['an empty request status asks for orders', 'Q|1|^S1', { request: 'orders', requestCode: '' }],
    ['D (demographics) is answered like O', 'Q|1|^S1||||||||||D', { request: 'orders' }],
    ['A cancels the last request (11.1.13)', 'Q|1|^S1||||||||||A', { request: 'cancel' }],
    ['F asks for results, which a gateway does not hold', 'Q|1|^S1||||||||||F', { request: 'unsupported', requestCode: 'F' }],
    ['escapes are undone in the specimen id', 'Q|1|^S&F&1', { specimens: [{ kind: 'id', accession: 'S|1' }] }],
    ['no specimen id: nothing named', 'Q|1|^', { specimens: [] }],
  ] as const)('%s', (_name, record, expected) => {
    expect(q(record)).toMatchObject(expected);
  });

  it('the specimen component is configurable (Sysmex sends rack^position^id^B)', () => {
    expect(q('Q|1|2^1^000000123^B||||20010807150000', { orders: { specimenComponent: 3 } }).specimens).toEqual([{ kind: 'id', accession: '000000123' }]);
  });

  it('past maxSpecimensPerQuery distinct ids the repeats are counted, not read; an ALL among them still asks for all', () => {
    const ids = Array.from({ length: 250 }, (_, i) => `^S${i % 200}`).join('\\');
    const read = q(`Q|1|${ids}||^^^ALL`, { orders: { maxSpecimensPerQuery: 100 } });
    expect(read.specimens).toEqual(Array.from({ length: 100 }, (_, i) => ({ kind: 'id', accession: `S${i}` })));
    expect(read.unread).toBe(150);
    expect(q(`Q|1|${ids}\\^all||^^^ALL`, { orders: { maxSpecimensPerQuery: 100 } })).toMatchObject({ specimens: [{ kind: 'all' }] });
    expect(q('Q|1|^S1\\^S2', { orders: { maxSpecimensPerQuery: 100 } }).unread).toBeUndefined();
  });

  it('Q.5 is read for at most 1,000 distinct test codes', () => {
    const tests = Array.from({ length: 1_500 }, (_, i) => `^^^T${i}`).join('\\');
    const read = q(`Q|1|^S1||${tests}`).tests;
    expect(read).toHaveLength(1_000);
    expect(read).toContain('T999');
  });

  it('a composite code joined as the mapping writes it', () => {
    expect(q('Q|1|^S1||^^^10^1', { codeComponents: [4, 5], codeJoin: '/' }).tests).toEqual(['10/1']);
  });
});

const specimen = (accession: string, codes: string[], over: Partial<InstrumentSpecimen> = {}): InstrumentSpecimen => ({
  accession,
  orders: codes.map((analyzerCode, i) => ({
    orderId: `o-${accession}-${i}`,
    loinc: `L${i}`,
    priority: 'routine',
    orderedAt: '2026-07-01T08:00:00Z',
    analyzerCode,
  })),
  patient: { id: 'PID-9', name: 'Doe^Jane', birthDate: '1970-01-02', sex: 'F' },
  ...over,
});

const ctx = (o: AstmOptionsInput = {}, delimiters = standardDelimiters): OutgoingContext => ({
  delimiters,
  receiver: 'cobas',
  at: Date.UTC(2026, 6, 1, 10, 0, 0),
  timezone: 'Europe/Vienna',
  options: options(o),
});

/** The records as the encoder writes them for the context's delimiters, in Latin-1. */
function written(records: RecordValue[] | null, c: OutgoingContext): string | null {
  if (records === null) return null;
  const encoded = encodeRecords(records, c.delimiters, c.options.charset);
  if (encoded.kind !== 'encoded') throw new Error(encoded.reason);
  return encoded.text.toString(c.options.charset);
}
const ordersMessage = (specimens: InstrumentSpecimen[], purpose: 'query' | 'download', c: OutgoingContext): string =>
  written(ordersRecords(specimens, purpose, c), c)!;
const noInformationMessage = (accessions: string[], c: OutgoingContext): string | null => written(noInformationRecords(accessions, c), c);

describe('ASTM order records (labgate → analyzer)', () => {
  it('an answer: H, then P and O per specimen with the test list in O.5, L', () => {
    const text = ordersMessage([specimen('S1', ['GLU', 'NA']), specimen('S2', ['K'])], 'query', ctx());
    expect(text.split('\r')).toEqual([
      'H|\\^&|||labgate|||||cobas||P|1|20260701120000',
      'P|1',
      'O|1|S1||^^^GLU\\^^^NA|R|20260701100000|||||N||||||||||||||Q',
      'P|2',
      'O|1|S2||^^^K|R|20260701100000|||||N||||||||||||||Q',
      'L|1|N',
      '',
    ]);
  });

  it('patient data enters P only when the options ask, escaped', () => {
    expect(ordersMessage([specimen('S1', ['GLU'])], 'query', ctx()).includes('Doe')).toBe(false);
    const text = ordersMessage([specimen('S1', ['GLU'])], 'query', ctx({ orders: { patient: true } }));
    expect(text.split('\r')[1]).toBe('P|1|PID-9|||Doe&S&Jane||19700102|F');
  });

  it("the analyzer's own delimiters, the configured accession place, code components, priority, action code and download report type", () => {
    const d = { field: '!', repeat: '~', component: '`', escape: '%' };
    const stat = specimen('S1', ['10/1', 'NA']);
    stat.orders[1]!.priority = 'stat';
    const text = ordersMessage(
      [stat],
      'download',
      ctx({ accession: { field: 'O.3', component: 2 }, codeComponents: [4, 5], codeJoin: '/', orders: { actionCode: 'A', terminationCode: 'F' } }, d),
    );
    const records = text.split('\r');
    expect(records[0]!.startsWith('H!~`%!!!labgate')).toBe(true);
    expect(records[2]).toBe('O!1!`S1!!```10`1~```NA!S!20260701100000!!!!!A!!!!!!!!!!!!!!O');
    expect(records[3]).toBe('L!1!F');
  });

  it('data cannot end a record or shift a field', () => {
    const text = ordersMessage([specimen('S|1\r^', ['GLU'])], 'query', ctx());
    expect(text.split('\r')[2]!.startsWith('O|1|S&F&1 &S&||')).toBe(true);
    expect(text.split('\r')).toHaveLength(5);
  });

  it('no information: L|1|I by default, an O record with the action code, or nothing', () => {
    expect(noInformationMessage(['S1'], ctx())!.split('\r')).toEqual(['H|\\^&|||labgate|||||cobas||P|1|20260701120000', 'L|1|I', '']);
    expect(
      noInformationMessage(['S1', 'S2'], ctx({ orders: { noInformation: { answer: 'order', actionCode: 'C' } } }))!
        .split('\r')
        .slice(1),
    ).toEqual(['P|1', 'O|1|S1|||||||||C||||||||||||||Y', 'P|2', 'O|1|S2|||||||||C||||||||||||||Y', 'L|1|N', '']);
    expect(noInformationMessage(['S1'], ctx({ orders: { noInformation: { answer: 'none' } } }))).toBeNull();
  });

  it('an answer reads back through the result parser with the same specimens and codes', () => {
    const text = ordersMessage([specimen('S1', ['GLU', 'NA'])], 'query', ctx());
    const m = parseRecords(text)[0]!;
    expect(m.terminated).toBe(true);
    expect(m.header?.fields[4]).toBe('labgate');
  });
});
