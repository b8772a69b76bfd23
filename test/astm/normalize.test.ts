// Records → keyed results: mapping, time, accession, QC, status, and what never leaks.
import { describe, expect, it } from 'vitest';
import { decodeAstmText } from '../../drivers/astm/decode.js';
import type { AstmOptionsInput } from '../../drivers/astm/options.js';
import { astmOptionsSchema } from '../../drivers/astm/options.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { dedupKey } from '../../src/result.js';
import { options, profile } from './profile.js';

const glucose = [{ code: 'GLU', loinc: '2345-7', unit: 'mmol/L' }];
const msg = (...records: string[]): Buffer => Buffer.from(records.join('\r') + '\r', 'latin1');
const decode = (text: Buffer, p: InstrumentProfile = profile(glucose), o: AstmOptionsInput = {}) => decodeAstmText(text, p, options(o));
const H = 'H|\\^&|||Emu^1|||||||P|1|20260701120000';
const P = 'P|1||PID77|LAB88|Doe^Jane^Q||19700102|F';

describe('ASTM normalization', () => {
  it('builds a keyed result whose key parts are exactly invariant 3', () => {
    const d = decode(msg(H, P, 'O|1| A100 ||^^^GLU', 'R|1|^^^GLU|5.5|mmol/L|3.9-6.1|N||F||||20260701113015', 'L|1|N'));
    expect(d.rejections).toEqual([]);
    const r = d.results[0]!;
    expect(r).toMatchObject({
      accession: 'A100',
      analyteLoinc: '2345-7',
      instrumentId: 'chem-1',
      resultedAt: '2026-07-01T11:30:15+00:00',
      value: 5.5,
      valueText: '5.5',
      unit: 'mmol/L',
      referenceRange: '3.9-6.1',
      flags: ['N'],
      status: 'final',
      qc: false,
      comparator: null,
    });
    expect(r.source).toEqual({ gatewayId: 'gw-test', driver: 'astm', analyzerCode: 'GLU', captureId: null });
    expect(dedupKey(r)).toBe(dedupKey({ accession: 'A100', analyteLoinc: '2345-7', instrumentId: 'chem-1', resultedAt: '2026-07-01T11:30:15Z' }));
  });

  it('reads offset-less times in the instrument zone', () => {
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^GLU|5|mmol/L||||F||||20260701133015', 'L|1'), profile(glucose, { timezone: 'Europe/Vienna' }));
    expect(d.results[0]!.resultedAt).toBe('2026-07-01T11:30:15+00:00');
  });

  it.each([
    { name: 'R.13 first', r: 'R|1|^^^GLU|5|mmol/L||||F|||20260701100000|20260701100500', h: H, at: '2026-07-01T10:05:00+00:00' },
    { name: 'then R.12', r: 'R|1|^^^GLU|5|mmol/L||||F|||20260701100000|', h: H, at: '2026-07-01T10:00:00+00:00' },
    { name: 'then H.14', r: 'R|1|^^^GLU|5|mmol/L||||F', h: H, at: '2026-07-01T12:00:00+00:00' },
    { name: 'minutes without seconds', r: 'R|1|^^^GLU|5|mmol/L||||F||||202607011005', h: H, at: '2026-07-01T10:05:00+00:00' },
    { name: 'an explicit offset is honoured', r: 'R|1|^^^GLU|5|mmol/L||||F||||20260701120500+0200', h: H, at: '2026-07-01T10:05:00+00:00' },
  ])('result time: $name', ({ r, h, at }) => {
    expect(decode(msg(h, 'O|1|A1', r, 'L|1')).results[0]!.resultedAt).toBe(at);
  });

  it('no usable time is a rejection, never an invented time', () => {
    const d = decode(msg('H|\\^&|||Emu', 'O|1|A1', 'R|1|^^^GLU|5|mmol/L||||F', 'L|1'));
    expect(d.results).toEqual([]);
    expect(d.rejections).toEqual([
      { reason: 'no result time: R.13, R.12, H.14 empty or absent', analyzerCode: 'GLU', accession: 'A1', observed: expect.any(Object) },
    ]);
  });

  it('an unreadable time rejects rather than falling back', () => {
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^GLU|5|mmol/L||||F||||2026-07-01', 'L|1'));
    expect(d.rejections[0]!.reason).toMatch(/R\.13 '2026-07-01' is not a date\/time/);
  });

  it('a configured time field replaces the defaults (Roche c311: O.23)', () => {
    const d = decode(msg('H|\\^&', 'O|1|A1||||||||||||||||||||20260701090000', 'R|1|^^^GLU|5|mmol/L||||F', 'L|1'), profile(glucose), {
      resultTime: ['R.13', 'O.23'],
    });
    expect(d.results[0]!.resultedAt).toBe('2026-07-01T09:00:00+00:00');
  });

  it('a spring-gap local time is rejected with a fixed-offset suggestion', () => {
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^GLU|5|mmol/L||||F||||20260329023000', 'L|1'), profile(glucose, { timezone: 'Europe/Vienna' }));
    expect(d.results).toEqual([]);
    expect(d.rejections[0]!.reason).toMatch(/does not exist in Europe\/Vienna.*fixed offset/);
  });

  it('an autumn-overlap local time is the earlier instant (fold=0)', () => {
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^GLU|5|mmol/L||||F||||20261025023000', 'L|1'), profile(glucose, { timezone: 'Europe/Vienna' }));
    expect(d.results[0]!.resultedAt).toBe('2026-10-25T00:30:00+00:00');
  });

  it('unmapped codes and unit mismatches are rejected with the code, never dropped', () => {
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^NA|140|mmol/L||||F', 'R|2|^^^GLU|90|mg/dL||||F', 'L|1'));
    expect(d.rejections).toEqual([
      { reason: "unmapped test code 'NA'", analyzerCode: 'NA', accession: 'A1', observed: { value: '140', unit: 'mmol/L' } },
      {
        reason: "unit 'mg/dL' for test code 'GLU' differs from the mapping's 'mmol/L'",
        analyzerCode: 'GLU',
        accession: 'A1',
        observed: { value: '90', unit: 'mg/dL' },
      },
    ]);
  });

  it('several R.3 components keep a concentration, an interpretation and a raw signal apart', () => {
    const mapping = [
      { code: '16^F', loinc: '13955-0', unit: 'S/CO' },
      { code: '16^I', loinc: '16128-1', unit: null },
      { code: '16^P', loinc: 'X-HCV-RLU', unit: 'RLU' },
    ];
    const R3 = (t: string): string => `^^^16^Anti-HCV^UNDILUTED^P^04152M100^01603^^${t}`;
    const d = decode(
      msg(H, 'O|1|A1', `R|1|${R3('F')}|0.12|S/CO||||F`, `R|2|${R3('I')}|Nonreactive|||||F`, `R|3|${R3('P')}|1234|RLU||||F`, 'L|1'),
      profile(mapping),
      { codeComponents: [4, 11] },
    );
    expect(d.rejections).toEqual([]);
    expect(d.results.map((r) => [r.source.analyzerCode, r.analyteLoinc, r.valueText])).toEqual([
      ['16^F', '13955-0', '0.12'],
      ['16^I', '16128-1', 'Nonreactive'],
      ['16^P', 'X-HCV-RLU', '1234'],
    ]);
    expect(new Set(d.results.map((r) => dedupKey(r))).size).toBe(3);
  });

  it('with the default component the triple collapses onto one code (why codeComponents exists)', () => {
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^16^x^^^^^^F|0.12|||||F', 'R|2|^^^16^x^^^^^^I|NR|||||F', 'L|1'), profile([{ code: '16', loinc: '13955-0' }]));
    expect(new Set(d.results.map((r) => dedupKey(r))).size).toBe(1);
  });

  it('accession from a configured field and component, space padding trimmed', () => {
    const d = decode(msg(H, 'O|1||^^        27^M', 'R|1|^^^^WBC^1|8.1|10*3/uL||||F', 'L|1'), profile([{ code: 'WBC', loinc: '6690-2' }]), {
      accession: { field: 'O.4', component: 3 },
      codeComponents: [5],
    });
    expect(d.results[0]!.accession).toBe('27');
  });

  it('a composite code joined as the vendor prints it (cobas e 411 Elecsys format ^^^10^1 is 10/1 in cobas format)', () => {
    const tsh = profile([{ code: '10/1', loinc: '3016-3' }]);
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^10^1|2.31|uIU/mL||N||F||||20260701113015', 'L|1'), tsh, { codeComponents: [4, 5], codeJoin: '/' });
    expect(d.rejections).toEqual([]);
    expect(d.results[0]).toMatchObject({ analyteLoinc: '3016-3', source: { analyzerCode: '10/1' } });
  });

  it('the code from the first non-empty of several components (Yumizen H500 ^^^MCV^787-2: the LOINC, else the local code)', () => {
    const p = profile([
      { code: '787-2', loinc: '787-2' },
      { code: 'PDW', loinc: 'X-PDW' },
    ]);
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^MCV^787-2|88|fL||N||F||||20260701113015', 'R|2|^^^PDW^|15|fL||N||F||||20260701113015', 'L|1'), p, {
      codeComponents: [5, 4],
      codePick: 'first-non-empty',
    });
    expect(d.rejections).toEqual([]);
    expect(d.results.map((r) => r.source.analyzerCode)).toEqual(['787-2', 'PDW']);
  });

  it('an accession of only NUL (&X00&) or control characters is a rejection', () => {
    for (const o of ['O|1|&X00&', 'O|1|&X0001&', 'O|1|&X1F&']) {
      const d = decode(msg(H, o, 'R|1|^^^GLU|5|mmol/L||||F', 'L|1'));
      expect(d.results).toEqual([]);
      expect(d.rejections[0]!.reason).toMatch(/accession.*printable/);
    }
  });

  it('a missing accession is a rejection', () => {
    expect(decode(msg(H, 'O|1|', 'R|1|^^^GLU|5|mmol/L||||F', 'L|1')).rejections[0]!.reason).toBe('no accession in O.3.1');
  });

  it.each([
    { name: 'O.12 action code Q', h: H, o: 'O|1|QC1||^^^GLU|||||||Q', o2: {}, qc: true },
    { name: 'H.12 processing id Q', h: 'H|\\^&|||Emu|||||||Q|1|20260701120000', o: 'O|1|QC1', o2: {}, qc: true },
    { name: 'a configured rule (O.16 CTRL)', h: H, o: 'O|1|QC1|||||||||||||CTRL', o2: { qcRules: [{ field: 'O.16', pattern: '^CTRL$' }] }, qc: true },
    { name: 'a patient sample', h: H, o: 'O|1|A1||||||||||N', o2: {}, qc: false },
  ])('QC: $name', ({ h, o, o2, qc }) => {
    expect(decode(msg(h, o, 'R|1|^^^GLU|5|mmol/L||||F', 'L|1'), profile(glucose), o2).results[0]!.qc).toBe(qc);
  });

  it("QC: a code mapped qc: true (a control's own test code), whatever the order says; its neighbours stay patient results", () => {
    const mapping = [...glucose, { code: 'QCGLU', loinc: '2345-7', unit: 'mmol/L', qc: true }];
    const d = decode(msg(H, 'O|1|A1||||||||||N', 'R|1|^^^QCGLU|5|mmol/L||||F', 'R|2|^^^GLU|5|mmol/L||||F', 'L|1'), profile(mapping));
    expect(d.results.map((r) => [r.source.analyzerCode, r.qc])).toEqual([
      ['QCGLU', true],
      ['GLU', false],
    ]);
  });

  it.each([
    ['<0.5', null, '<', 0.5],
    ['>=500', null, '>=', 500],
    ['  5.5', 5.5, null, null],
    ['1e3', 1000, null, null],
    ['Positive', null, null, null],
    ['', null, null, null],
  ])('value %j', (text, value, comparator, bound) => {
    const r = decode(msg(H, 'O|1|A1', `R|1|^^^GLU|${text}|mmol/L||||F`, 'L|1')).results[0]!;
    expect([r.value, r.comparator, r.bound, r.valueText]).toEqual([value, comparator, bound, text.trim()]);
  });

  it.each([
    ['F', 'final'],
    ['C', 'correction'],
    ['P', 'preliminary'],
    ['X', 'cannot-be-done'],
    ['R', 'final'],
    ['W', 'preliminary'],
    ['Z', 'unknown'],
  ])('status %j is loaded with its letter', (code, status) => {
    expect(decode(msg(H, 'O|1|A1', `R|1|^^^GLU|5|mmol/L||||${code}`, 'L|1')).results[0]).toMatchObject({ status, statusCode: code });
  });

  it('an empty status follows emptyStatus and keeps no letter', () => {
    const empty = msg(H, 'O|1|A1', 'R|1|^^^GLU|5|mmol/L||||', 'L|1');
    expect(decode(empty).results[0]).toMatchObject({ status: 'final', statusCode: null });
    expect(decode(empty, profile(glucose), { emptyStatus: 'reject' }).rejections[0]!.reason).toBe('R.9 result status is empty');
  });

  it('ignored codes are neither loaded nor rejected', () => {
    const d = decode(msg(H, 'O|1|A1', 'R|1|^^^IMG|x.png', 'L|1'), profile(glucose), { ignoreCodes: ['IMG'] });
    expect(d).toEqual({ results: [], rejections: [] });
  });

  it('queries and headerless records are reported', () => {
    expect(decode(msg(H, 'Q|1|^A1||^^^ALL', 'L|1')).rejections[0]!.reason).toMatch(/host query/);
  });

  it('patient demographics never reach a result or a rejection', () => {
    const d = decode(
      msg(H, P, 'O|1|A1', 'R|1|^^^GLU|5|mmol/L||||F', 'R|2|^^^NA|1|x||||F', 'R|3|^^^GLU|5|mg/dL||||F', 'R|4|^^^GLU|5|mmol/L||||F||||bad', 'L|1'),
    );
    const json = JSON.stringify(d);
    for (const secret of ['Doe', 'Jane', '19700102', 'PID77', 'LAB88']) expect(json).not.toContain(secret);
    expect(d.results).toHaveLength(1);
    expect(d.rejections).toHaveLength(3);
  });

  it('Latin-1 by default, UTF-8 when configured', () => {
    const text = 'H|\\^&\rO|1|A1\rR|1|^^^GLU|négatif|||||F||||20260701100000\rL|1\r';
    const p = profile([{ code: 'GLU', loinc: '2345-7' }]);
    expect(decode(Buffer.from(text, 'latin1'), p).results[0]!.valueText).toBe('négatif');
    expect(decode(Buffer.from(text, 'utf8'), p, { charset: 'utf8' }).results[0]!.valueText).toBe('négatif');
  });

  it('options: defaults are the standard; bad values fail at start-up', () => {
    const o = astmOptionsSchema.parse({});
    expect(o).toMatchObject({
      framing: 'link',
      maxFrameBytes: 247,
      charset: 'latin1',
      codeComponents: [4],
      resultTime: [
        { segment: 'R', field: 13 },
        { segment: 'R', field: 12 },
        { segment: 'H', field: 14 },
      ],
      accession: { segment: 'O', field: 3, component: 1 },
      unit: { segment: 'R', field: 5, component: 1 },
    });
    expect(o.deviations).toEqual({
      frameNumbers: 'standard',
      trailers: ['CRLF'],
      lowerCaseChecksum: true,
      missingChecksum: false,
      frameFormat: 'standard',
      completeAtEot: false,
    });
    expect(astmOptionsSchema.safeParse({ maxFrameBytes: 64_001 }).success).toBe(false);
    expect(astmOptionsSchema.safeParse({ resultTime: ['P.8'] }).success).toBe(false);
    expect(astmOptionsSchema.safeParse({ framng: 'none' }).success).toBe(false);
    expect(astmOptionsSchema.safeParse({ qcRules: [{ field: 'O.16', pattern: '(' }] }).success).toBe(false);
  });

  it('field locations: a component, the whole field, and the older {field, component} form', () => {
    const c311 = msg(H, 'O|1|17^SID-42^X||^^^GLU', 'R|1|^^^GLU|5|10^3/uL||||F||||20260701113015', 'L|1');
    const cells = profile([{ code: 'GLU', loinc: '2345-7', unit: '10^3/uL' }]);
    expect(decode(c311, cells, { accession: 'O.3.2', unit: 'R.5' }).results.map((r) => [r.accession, r.unit])).toEqual([['SID-42', '10^3/uL']]);
    expect(decode(c311, cells, { accession: { field: 'O.3', component: 2 }, unit: 'R.5' }).results.map((r) => r.accession)).toEqual(['SID-42']);
    // R.5.1 (the default) reads `10`, which the mapping does not name: rejected with the unit it read.
    expect(decode(c311, cells, { accession: 'O.3.2' }).rejections.map((r) => r.observed?.unit)).toEqual(['10']);
    // The key's identity: a whole field holding components names no one accession.
    expect(decode(c311, cells, { accession: 'O.3', unit: 'R.5' }).rejections.map((r) => r.reason)).toEqual([
      'accession location O.3 holds several parts: name one (e.g. O.3.1)',
    ]);
    expect(decode(c311, cells, { accession: 'O.3.2', unit: 'R.5', qcRules: [{ field: 'O.3.1', pattern: '^17$' }] }).results[0]!.qc).toBe(true);
    expect(decode(c311, cells, { accession: 'O.3.2', unit: 'R.5', qcRules: [{ field: 'O.3', component: 3, pattern: '^X$' }] }).results[0]!.qc).toBe(true);
  });

  it.each([
    [{ accession: 'R.3' }, "'R.3': the accession comes from an O or P record (O, P)"],
    [{ accession: 'O-3' }, "'O-3' is not a field location: expected a record type such as O or R, '.' and a field number (e.g. O.3, O.3.2 or R.5)"],
    [{ unit: 'R.5.1.1' }, "'R.5.1.1' is not a field location: at most field.component (ASTM has no subcomponents) (e.g. O.3, O.3.2 or R.5)"],
    [{ unit: 'C.3' }, "'C.3': a result's values are read from its H, P, O or R record (H, P, O, R)"],
    [{ resultTime: ['P.8'] }, "'P.8': a result time is read from an H, O or R record, never from patient data (H, O, R)"],
  ])('a location outside the grammar is refused with its reason: %o', (input, reason) => {
    expect(astmOptionsSchema.safeParse(input).error?.issues.map((i) => i.message)).toEqual([reason]);
  });
});
