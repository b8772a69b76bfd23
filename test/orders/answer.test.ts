// What an analyzer is answered: reverse mapping, named tests, ranges, and "no information" with its reason.
import { describe, expect, it } from 'vitest';
import { analyzerCodeFor, boundQueries, decideAnswer, dispatchedOrders, lookupPlan, ordersFor, selects, type Lookup } from '../../src/orders/answer.js';
import { parseSpecimenOrders, parseWorklist, type OrderQuery, type SpecimenOrders } from '../../src/orders/order.js';

const mapping = [
  { code: 'GLU', loinc: '2345-7' },
  { code: 'K', loinc: '2823-3' },
  { code: 'K2', loinc: '2823-3' },
];
const order = (orderId: string, loinc: string) => ({ orderId, loinc, priority: 'routine' as const, orderedAt: '2026-07-01T08:00:00Z' });
const specimen = (accession: string, ...loincs: string[]): SpecimenOrders => ({
  accession,
  orders: loincs.map((l, i) => order(`${accession}-${i}`, l)),
  patient: null,
});
const query = (over: Partial<OrderQuery> = {}): OrderQuery => ({
  specimens: [{ kind: 'id', accession: 'S1' }],
  tests: 'all',
  request: 'orders',
  requestCode: 'O',
  ...over,
});
const found = (...s: SpecimenOrders[]): Lookup => ({ kind: 'specimens', specimens: s });

describe('orders for one instrument', () => {
  it('the reverse mapping takes the first code that names the LOINC, case-insensitively', () => {
    expect(analyzerCodeFor(mapping, '2823-3')).toBe('K');
    expect(analyzerCodeFor(mapping, ' 2345-7 ')).toBe('GLU');
    expect(analyzerCodeFor(mapping, '718-7')).toBeUndefined();
  });

  it('only orders the mapping can express, and only the tests the analyzer named', () => {
    const s = specimen('S1', '2345-7', '718-7', '2823-3', '2823-3');
    expect(ordersFor(s, mapping).orders.map((o) => o.analyzerCode)).toEqual(['GLU', 'K']);
    expect(ordersFor(s, mapping, ['K']).orders.map((o) => o.analyzerCode)).toEqual(['K']);
    // Both orders for one test reached the analyzer as that test; the one it cannot run did not.
    expect(dispatchedOrders(s, ordersFor(s, mapping))).toEqual(['S1-0', 'S1-2', 'S1-3']);
  });

  it.each([
    [{ kind: 'range', from: '100', to: '200' }, '99', false],
    [{ kind: 'range', from: '100', to: '200' }, '0150', true],
    [{ kind: 'range', from: '100', to: '200' }, '1000', false],
    [{ kind: 'range', from: 'A100', to: 'A200' }, 'A150', true],
    [{ kind: 'all' }, 'anything', true],
    [{ kind: 'id', accession: 'S1' }, 'S2', false],
  ] as const)('%j selects %s: %s', (selector, accession, expected) => {
    expect(selects(selector, accession)).toBe(expected);
  });

  it('ids are looked up one by one, once per message; ranges and ALL from the worklist, once; a query not for orders looks up nothing', () => {
    const ids = (...accessions: string[]) => query({ specimens: accessions.map((accession) => ({ kind: 'id' as const, accession })) });
    expect(lookupPlan([ids('S1', 'S2'), ids('S2', 'S3')])).toEqual({ accessions: ['S1', 'S2', 'S3'], worklist: false });
    expect(lookupPlan([query({ specimens: [{ kind: 'all' }] }), query({ specimens: [{ kind: 'range', from: '1', to: '9' }] })])).toEqual({
      accessions: [],
      worklist: true,
    });
    expect(lookupPlan([{ ...ids('S1'), request: 'unsupported' }])).toEqual({ accessions: [], worklist: false });
    expect(lookupPlan([query({ specimens: [{ kind: 'all' }] })])).toEqual({ accessions: [], worklist: true });
  });
});

describe('the answer', () => {
  it('orders for the specimens the LIMS answered; those without are named', () => {
    const a = decideAnswer(
      query({
        specimens: [
          { kind: 'id', accession: 'S1' },
          { kind: 'id', accession: 'S2' },
        ],
      }),
      [found(specimen('S1', '2345-7')), found()],
      mapping,
    );
    expect(a).toMatchObject({ kind: 'orders', without: ['S2'] });
    expect(a.kind === 'orders' && a.specimens.map((s) => s.accession)).toEqual(['S1']);
  });

  it.each([
    ['no orders at all', [found()], 'no-orders'],
    ['orders only for other instruments', [found(specimen('S1', '718-7'))], 'not-expressible'],
    ['the LIMS too slow', [{ kind: 'failed', reason: 'lims-timeout' }], 'lims-timeout'],
    ['the LIMS down, another lookup empty', [found(), { kind: 'failed', reason: 'lims-unavailable' }], 'lims-unavailable'],
  ] as const)('no information: %s', (_name, lookups, reason) => {
    expect(decideAnswer(query(), lookups, mapping)).toEqual({ kind: 'no-information', reason, without: ['S1'] });
  });

  it('a request for results is not answered with orders', () => {
    expect(decideAnswer(query({ request: 'unsupported', requestCode: 'F' }), [found(specimen('S1', '2345-7'))], mapping)).toMatchObject({
      kind: 'no-information',
      reason: 'unsupported-request',
    });
  });

  it('a range takes the worklist specimens inside it only', () => {
    const a = decideAnswer(
      query({ specimens: [{ kind: 'range', from: '100', to: '200' }] }),
      [found(specimen('150', '2345-7'), specimen('250', '2345-7'))],
      mapping,
    );
    expect(a.kind === 'orders' && a.specimens.map((s) => s.accession)).toEqual(['150']);
  });
});

describe("the LIMS's JSON", () => {
  it('a specimen with orders and a patient; defaults for what it leaves out', () => {
    const r = parseSpecimenOrders({
      accession: 'S1',
      orders: [{ orderId: 'u1', loinc: '2823-3', orderedAt: '2026-07-01T08:00:00+02:00' }],
      patient: { id: 'P', name: 'N', birthDate: '1970-01-02', sex: 'X' },
    });
    expect(r).toEqual({
      ok: true,
      value: {
        accession: 'S1',
        orders: [{ orderId: 'u1', loinc: '2823-3', priority: 'routine', orderedAt: '2026-07-01T08:00:00+02:00' }],
        patient: { id: 'P', name: 'N', birthDate: '1970-01-02', sex: 'U' },
      },
    });
  });

  it('a malformed answer is a reason naming paths, never values', () => {
    const r = parseSpecimenOrders({ accession: 'S1', orders: [{ orderId: 'u1', loinc: '2823-3', orderedAt: 'Doe Jane' }] });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/orders\.0\.orderedAt/);
    expect(!r.ok && r.reason).not.toMatch(/Doe/);
    expect(parseWorklist({ specimens: [{ accession: 'S1' }] })).toEqual({ ok: true, value: [{ accession: 'S1', orders: [], patient: null }] });
    expect(parseWorklist('nope').ok).toBe(false);
  });
});

describe('how much one query may ask', () => {
  const ids = (...accessions: string[]) => query({ specimens: accessions.map((accession) => ({ kind: 'id' as const, accession })) });

  it('keeps the first specimens named up to the bound, over all Q records of the message, each id once; the rest are refused', () => {
    const { queries, refused } = boundQueries([ids('S1', 'S2', 'S1'), ids('S2', 'S3', 'S4'), ids('S5')], 3);
    expect(queries.map((q) => q.specimens.map((s) => (s.kind === 'id' ? s.accession : s.kind)))).toEqual([
      ['S1', 'S2', 'S1'],
      ['S2', 'S3'],
    ]);
    expect(refused).toBe(2);
  });

  it('specimens a driver counted but did not read are refused too', () => {
    expect(boundQueries([{ ...ids('S1'), unread: 5 }, ids('S2')], 10).refused).toBe(5);
  });

  it('a range or ALL counts one (a worklist request); a query that named nothing stays as it was', () => {
    const range = query({ specimens: [{ kind: 'range', from: '1', to: '99999' }] });
    const none = query({ specimens: [] });
    expect(boundQueries([range, none, ids('S1')], 2)).toEqual({ queries: [range, none, ids('S1')], refused: 0 });
    expect(boundQueries([range, ids('S1', 'S2')], 2)).toEqual({ queries: [range, ids('S1')], refused: 1 });
  });

  it('30,000 named specimens are bounded; the answer is decided from what was looked up', () => {
    const many = ids(...Array.from({ length: 30_000 }, (_, i) => `S${i}`));
    const { queries, refused } = boundQueries([many], 10_000);
    expect(refused).toBe(20_000);
    const lookup = found(...Array.from({ length: 10_000 }, (_, i) => specimen(`S${i}`, '2345-7')));
    const answer = decideAnswer(queries[0]!, [lookup], mapping);
    expect(answer.kind === 'orders' && answer.specimens.length).toBe(10_000);
  });
});
