// The codes each instrument has sent, kept by ingest: stored results and rejected codes alike, with the count, the
// last value and unit and when; what the analyzer sent beside a rejected code is never kept with the reasons; a
// reprocess counts nothing again; the table stays bounded per instrument; an upgraded store lists what it holds.
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/message.js';
import { KEEP_CODES } from '../../src/store/instrument-codes.js';
import { migrations } from '../../src/store/migrations.js';
import type { Store } from '../../src/store/store.js';
import { downgradeBefore, message, result, scratch } from './store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const RECEIVED = Date.UTC(2026, 6, 1, 14, 30, 5);
const at = (m: InboundMessage, receivedAt: number, instrumentId = 'chem-1'): InboundMessage => ({ ...m, capture: { ...m.capture, receivedAt, instrumentId } });
const unmapped = (code: string, value: string, unit: string | null) => ({
  reason: `unmapped test code '${code}'`,
  analyzerCode: code,
  accession: 'A1',
  observed: { value, unit },
});

function opened(): { store: Store; reopen: () => Store } {
  const s = scratch();
  cleanups.push(s.cleanup);
  return { store: s.open(), reopen: () => s.open() };
}

describe('codes seen', () => {
  it('lists the codes of stored results and of rejections, with count, last value, unit and time', () => {
    const { store } = opened();
    store.ingest(message([result(1), result(2)], [unmapped('GLU', '5.4', 'mmol/L'), unmapped('CRP', '<0.5', 'mg/L')]));
    store.ingest(at(message([result(3, { valueText: '4.4' })], [unmapped('GLU', '6.1', 'mmol/L')]), RECEIVED + 60_000));
    store.ingest(at(message([], [unmapped('HGB', '13.9', 'g/dL')]), RECEIVED + 5_000, 'hema-1'));
    expect(store.codesSeen()).toEqual([
      { instrumentId: 'chem-1', code: 'CRP', seen: 1, lastValue: '<0.5', lastUnit: 'mg/L', lastAt: RECEIVED },
      { instrumentId: 'chem-1', code: 'GLU', seen: 2, lastValue: '6.1', lastUnit: 'mmol/L', lastAt: RECEIVED + 60_000 },
      { instrumentId: 'chem-1', code: 'K', seen: 3, lastValue: '4.4', lastUnit: 'mmol/L', lastAt: RECEIVED + 60_000 },
      { instrumentId: 'hema-1', code: 'HGB', seen: 1, lastValue: '13.9', lastUnit: 'g/dL', lastAt: RECEIVED + 5_000 },
    ]);
  });

  it('keeps the reasons as they were: what was sent beside a rejected code is for the codes seen only', () => {
    const { store } = opened();
    const { captureId } = store.ingest(message([], [unmapped('GLU', '5.4', 'mmol/L')]));
    expect(store.rejectedCaptures(10)[0]?.reasons).toEqual([{ reason: "unmapped test code 'GLU'", analyzerCode: 'GLU', accession: 'A1' }]);
    const audit = store.db.prepare("SELECT detail FROM audit WHERE action = 'rejected' AND subject = ?").pluck().all(`capture:${captureId}`);
    expect(audit).toEqual(['{"reason":"unmapped test code \'GLU\'","analyzerCode":"GLU","accession":"A1"}']);
  });

  it('a reprocess of the same message counts nothing again', () => {
    const { store } = opened();
    const { captureId } = store.ingest(message([], [unmapped('K', '4.1', 'mmol/L')]));
    store.reprocess(captureId, { results: [result(1)], rejections: [] }, 'web-local');
    expect(store.codesSeen()).toMatchObject([{ code: 'K', seen: 1 }]);
    expect(store.rejectedCaptures(10)).toEqual([]);
  });

  it('cuts a long value and keeps control characters as sent (the page shows them as codes)', () => {
    const { store } = opened();
    store.ingest(message([], [unmapped('X', `\u202E${'9'.repeat(300)}`, null)]));
    const [seen] = store.codesSeen();
    expect(seen?.lastValue).toBe(`\u202E${'9'.repeat(119)}…`);
    expect(seen?.lastUnit).toBeNull();
  });

  it(`keeps the ${KEEP_CODES} most recently seen codes per instrument`, () => {
    const { store } = opened();
    const many = Array.from({ length: KEEP_CODES + 20 }, (_, i) => unmapped(`C${i}`, '1', null));
    store.ingest(message([], many.slice(0, 20)));
    // An hour later the prune runs again, in the next message's transaction.
    store.ingest(at(message([], many.slice(20)), RECEIVED + 3_600_000));
    store.ingest(at(message([], [unmapped('C0', '2', null)]), RECEIVED + 7_200_000));
    const codes = store.codesSeen().map((c) => c.code);
    expect(codes).toHaveLength(KEEP_CODES);
    expect(codes).toContain('C0');
    expect(codes).not.toContain('C1');
  });

  it(`never holds more than ${KEEP_CODES} codes of an instrument, however many arrive within the hour`, () => {
    const { store } = opened();
    // Twenty messages of a thousand new codes each, a second apart (an analyzer, or anyone on its port, babbling).
    for (let m = 0; m < 20; m++) {
      const codes = Array.from({ length: 1_000 }, (_, i) => unmapped(`M${m}C${i}`, '1', null));
      store.ingest(at(message([], codes), RECEIVED + m * 1_000));
      expect(store.codesSeen().length).toBeLessThanOrEqual(KEEP_CODES);
    }
    // The newest kept; another instrument's codes untouched.
    expect(store.codesSeen().every((c) => c.code.startsWith('M19C'))).toBe(true);
    store.ingest(at(message([], [unmapped('NA', '140', 'mmol/L')]), RECEIVED + 30_000, 'chem-2'));
    expect(store.codesSeen().filter((c) => c.instrumentId === 'chem-2')).toHaveLength(1);
  });

  it('an upgraded store lists the codes of its results and of its rejected captures', () => {
    const { store, reopen } = opened();
    store.ingest(message([result(1), result(2)], [unmapped('GLU', '5.4', 'mmol/L')]));
    store.ingest(at(message([], [unmapped('GLU', '5.9', 'mmol/L')]), RECEIVED + 60_000));
    const codes = migrations.findIndex((m) => typeof m === 'string' && m.includes('CREATE TABLE instrument_codes'));
    downgradeBefore(store, codes);
    store.close();
    expect(reopen().codesSeen()).toEqual([
      { instrumentId: 'chem-1', code: 'GLU', seen: 2, lastValue: null, lastUnit: null, lastAt: RECEIVED + 60_000 },
      { instrumentId: 'chem-1', code: 'K', seen: 2, lastValue: '4.1', lastUnit: 'mmol/L', lastAt: RECEIVED },
    ]);
  });
});
