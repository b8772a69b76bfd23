// The codes each instrument has sent, kept by ingest: stored results and rejected codes alike, with the count, the
// last value and unit and when; what the analyzer sent beside a rejected code is never kept with the reasons; a
// reprocess counts nothing again; the table stays bounded per instrument; an upgraded store lists what it holds.
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/message.js';
import { KEEP_CODES } from '../../src/store/instrument-codes.js';
import { migrations } from '../../src/store/migrations.js';
import type { Store, StoreOptions } from '../../src/store/store.js';
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

function opened(options: Partial<StoreOptions> = {}): { store: Store; reopen: () => Store } {
  const s = scratch();
  cleanups.push(s.cleanup);
  return { store: s.open(options), reopen: () => s.open(options) };
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

  it(`keeps those needing a mapping first, then the newest: 2,000 codes of which 600 need one keep the newest ${KEEP_CODES} of those`, () => {
    const mapping = Array.from({ length: 10 }, (_, m) => Array.from({ length: 140 }, (_, i) => ({ code: `M${m}_${i}`, loinc: '2345-7', unit: null }))).flat();
    const { store } = opened({ mappingOf: (id) => (id === 'chem-1' ? mapping : undefined) });
    // Ten messages a minute apart, each of 140 mapped codes and 60 that need a mapping.
    for (let m = 0; m < 10; m++) {
      const codes = [
        ...Array.from({ length: 140 }, (_, i) => unmapped(`M${m}_${i}`, '1', null)),
        ...Array.from({ length: 60 }, (_, i) => unmapped(`U${m}_${i}`, '1', null)),
      ];
      store.ingest(at(message([], codes), RECEIVED + m * 60_000));
    }
    const kept = store.codesSeen();
    expect(kept).toHaveLength(KEEP_CODES);
    expect(kept.every((c) => c.code.startsWith('U'))).toBe(true);
    // The newest: messages 2 to 9 whole (480), and 20 of message 1 (the same instant: by code).
    expect(kept.filter((c) => c.code.startsWith('U0_'))).toEqual([]);
    expect(kept.filter((c) => c.code.startsWith('U1_'))).toHaveLength(20);
    expect(kept.filter((c) => c.code.startsWith('U9_'))).toHaveLength(60);
  });

  it('judges by the mapping when the prune runs, not when a code was last seen: after a reload, as the page does', () => {
    const codes = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    let mapping = codes('A', KEEP_CODES).map((code) => ({ code, loinc: '2345-7' }));
    const { store } = opened({ mappingOf: () => mapping });
    store.ingest(
      message(
        [],
        codes('A', KEEP_CODES).map((c) => unmapped(c, '1', null)),
      ),
    );
    // A reload takes the A lines out and maps the C codes; then the analyzer sends 100 C codes.
    mapping = codes('C', 100).map((code) => ({ code, loinc: '2345-7' }));
    store.ingest(
      at(
        message(
          [],
          codes('C', 100).map((c) => unmapped(c, '1', null)),
        ),
        RECEIVED + 60_000,
      ),
    );
    // Every A code needs a mapping now: they are kept before the newer, mapped C codes.
    expect(
      store
        .codesSeen()
        .map((c) => c.code)
        .sort(),
    ).toEqual(codes('A', KEEP_CODES).sort());
  });

  it(`a table from before the bound is pruned when the writer opens it, and one instrument's read never takes more than ${KEEP_CODES}`, () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const first = s.open();
    const insert = first.db.prepare('INSERT INTO instrument_codes (instrument_id, code, seen, last_value, last_unit, last_at) VALUES (?, ?, 1, ?, NULL, ?)');
    first.db.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run('chem-1', `C${i}`, '1', RECEIVED + i);
    })();
    first.close();
    // An operator command beside the gateway reads, never prunes: its read is bounded all the same.
    const reader = s.open({ lock: false });
    expect(reader.codesSeen('chem-1')).toHaveLength(KEEP_CODES);
    expect(reader.codesSeen()).toHaveLength(2_000);
    reader.close();
    // C0-C599 need a mapping (the others are mapped): the newest 500 of them are kept, and no mapped one.
    const mapping = Array.from({ length: 1_400 }, (_, i) => ({ code: `C${600 + i}`, loinc: '2345-7' }));
    const writer = s.open({ mappingOf: () => mapping });
    const kept = writer.codesSeen('chem-1').map((c) => c.code);
    expect(kept).toHaveLength(KEEP_CODES);
    expect(kept).toContain('C599');
    expect(kept).toContain('C100');
    expect(kept).not.toContain('C99');
    expect(kept).not.toContain('C1999');
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
