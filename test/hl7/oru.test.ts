import { describe, expect, test } from 'vitest';
import { decodeHl7Message } from '../../drivers/hl7/message.js';
import { hl7Options } from '../../drivers/hl7/options.js';
import { dedupKey } from '../../src/result.js';
import { hematology25, lri251, mindrayBs, mindrayBsQc, radiometerAbl, statusMessage, type Hl7Fixture } from './fixtures.js';

const decode = (f: Hl7Fixture, payload = f.payload) => decodeHl7Message(Buffer.from(payload, 'latin1'), f.profile, hl7Options(f.options));
const brief = (f: Hl7Fixture, payload?: string) =>
  decode(f, payload).decoded.results.map((r) => [
    r.accession,
    r.analyteLoinc,
    r.resultedAt,
    r.valueText,
    r.value,
    r.comparator,
    r.bound,
    r.unit,
    r.status,
    r.flags.join(','),
    r.qc,
  ]);

describe('ORU^R01 normalization per source', () => {
  test('Mindray BS v2.3.1: OBR-2 barcode, OBX-4 names, censored NM, per-OBX times in Vienna', () => {
    expect(brief(mindrayBs)).toEqual([
      ['2410290017', '2345-7', '2024-10-29T07:29:55+00:00', '5.42', 5.42, null, null, 'mmol/L', 'final', 'N', false],
      ['2410290017', '14682-9', '2024-10-29T07:30:03+00:00', '<18', null, '<', 18, 'umol/L', 'final', 'L', false],
      ['2410290017', '2823-3', '2024-10-29T07:30:10+00:00', '6.8', 6.8, null, null, 'mmol/L', 'final', 'H', false],
    ]);
    expect(decode(mindrayBs).decoded.rejections).toEqual([]);
  });

  test('Mindray QC run (MSH-16 = 2) marks every result qc', () => {
    const results = decode(mindrayBsQc).decoded.results;
    expect(results).toHaveLength(3);
    expect(results.every((r) => r.qc && r.accession === 'QC-LOW-0412')).toBe(true);
  });

  test('Radiometer v2.4: offsets honored across the DST change, escapes unescaped, OBX-18 is provenance only', () => {
    const { decoded } = decode(radiometerAbl);
    expect(decoded.rejections).toEqual([]);
    expect(decoded.results.map((r) => [r.accession, r.resultedAt, r.valueText, r.unit])).toEqual([
      ['BG-5521', '2024-03-31T00:58:00+00:00', '7.381', null],
      ['BG-5521', '2024-03-31T00:58:00+00:00', '5.41', 'kPa'],
      ['BG-5521', '2024-03-31T00:58:00+00:00', '4.1', 'mmol/L'],
      ['BG-5521', '2024-03-31T00:58:00+00:00', 'syringe & capillary | note\\x', null],
    ]);
    const first = decoded.results[0]!;
    expect(first.instrumentId).toBe('abl90');
    expect(first.source.equipment).toBe('ABL90-SN7731');
    const otherUnit = decode(radiometerAbl, radiometerAbl.payload.replaceAll('ABL90-SN7731', 'ABL90-SN0001')).decoded.results[0]!;
    expect(otherUnit.source.equipment).toBe('ABL90-SN0001');
    expect(dedupKey(otherUnit)).toBe(dedupKey(first));
  });

  test('v2.5.1 LRI: SPM-2 filler id, LOINC chosen by coding system, SN censored, CWE, C and X statuses, specimen OBX skipped', () => {
    expect(brief(lri251)).toEqual([
      ['ACC-77213', '2345-7', '2024-10-29T15:05:12+00:00', '98', 98, null, null, 'mg/dL', 'final', '', false],
      ['ACC-77213', '1988-5', '2024-10-29T15:06:00+00:00', '<0.5', null, '<', 0.5, 'mg/dL', 'correction', '', false],
      ['ACC-77213', '5196-1', '2024-10-29T15:10:01+00:00', '260385009', null, null, null, null, 'final', '', false],
      ['ACC-77213', '2951-2', '2024-10-29T15:05:12+00:00', '', null, null, null, null, 'cannot-be-done', '', false],
    ]);
    expect(decode(lri251).decoded.results.map((r) => r.source.equipment)).toEqual(['ATL-01', 'ATL-01', 'ATL-02', 'ATL-01']);
  });

  test('DxH v2.5 with LF: OBR-7 fallback, autumn overlap read as the earlier instant, repeated flags, ED skipped', () => {
    const { decoded } = decode(hematology25);
    expect(decoded.rejections).toEqual([]);
    expect(decoded.results.map((r) => [r.accession, r.resultedAt, r.valueText, r.status, r.flags])).toEqual([
      ['24HEM0099', '2024-10-27T00:30:00+00:00', '12.4', 'final', ['H', 'A']],
      ['24HEM0099', '2024-10-27T00:30:00+00:00', '13.1', 'final', []],
      ['24HEM0099', '2024-10-27T00:30:00+00:00', '*****', 'cannot-be-done', ['A']],
    ]);
  });

  test('a message type the driver does not read is rejected with its type', () => {
    const d = decode(statusMessage);
    expect(d.kind).toBe('other');
    expect(d.decoded).toEqual({ results: [], rejections: [{ reason: 'message type ESU^U01 is not read' }] });
    expect(d.header?.controlId).toBe('DXH-7782');
  });
});

describe('rejections instead of invented data', () => {
  const base = mindrayBs;
  const obx = (fields: string): string => base.payload.replace(/OBX\|1\|[^\r]*\r/, `${fields}\r`);

  test.each([
    [
      'no time anywhere',
      'OBX|1|NM|2|GLU|5.42|mmol/L||N|||F||||',
      (p: string) => p.replace('|20241029081200|', '||').replace('20241029083015', ''),
      /no result time in OBX-14.1, OBR-7.1, MSH-7.1/,
    ],
    ['time in the spring gap', 'OBX|1|NM|2|GLU|5.42|mmol/L||N|||F|||20240331023000', undefined, /does not exist in Europe\/Vienna.*fixed offset/],
    ['time without minutes', 'OBX|1|NM|2|GLU|5.42|mmol/L||N|||F|||2024103108', undefined, /not precise to the minute/],
    ['unmapped code', 'OBX|1|NM|2|UREA|5.42|mmol/L||N|||F|||20241029082955', undefined, /unmapped test code 'UREA'/],
    ['unit differs from the mapping', 'OBX|1|NM|2|GLU|98|mg/dL||N|||F|||20241029082955', undefined, /unit 'mg\/dL'/],
    ['a numeric (NM) value that is not a number', 'OBX|1|NM|2|GLU|5,42|mmol/L||N|||F|||20241029082955', undefined, /OBX-5 '5,42' is not a number \(OBX-2 NM\)/],
    ['no code', 'OBX|1|NM|2||5.42|mmol/L||N|||F|||20241029082955', undefined, /has no test code in OBX-4/],
  ])('%s', (_name, row, edit, reason) => {
    const payload = (edit ?? ((p: string) => p))(obx(row));
    const { decoded } = decode(base, payload);
    expect(decoded.results.map((r) => r.analyteLoinc)).not.toContain('2345-7');
    expect(decoded.rejections.map((r) => r.reason).join('\n')).toMatch(reason);
  });

  test('a rejected code carries what the analyzer sent beside it (OBX-5 unescaped, OBX-6), for the codes seen', () => {
    const { decoded } = decode(base, obx('OBX|1|NM|2|UREA|5\\T\\42|mmol/L||N|||F|||20241029082955'));
    expect(decoded.rejections.find((r) => r.analyzerCode === 'UREA')?.observed).toEqual({ value: '5&42', unit: 'mmol/L' });
  });

  test('no accession in any configured field', () => {
    const payload = mindrayBs.payload.replace('|2410290017|17|', '|||');
    const { decoded } = decode(mindrayBs, payload);
    expect(decoded.results).toEqual([]);
    expect(decoded.rejections).toHaveLength(3);
    expect(decoded.rejections[0]!.reason).toBe('no accession in OBR-2, OBR-3');
  });

  test('empty OBX-11 follows missingStatus', () => {
    const payload = mindrayBs.payload.replace('|N|||F||5.42|', '|N|||||5.42|');
    expect(decode({ ...mindrayBs, options: { ...mindrayBs.options, missingStatus: 'reject' } }, payload).decoded.rejections[0]?.reason).toBe(
      'OBX-11 status is empty',
    );
    expect(decode(mindrayBs, payload).decoded.results[0]?.status).toBe('final');
  });

  test('garbage is a message-level rejection, not an exception', () => {
    const d = decodeHl7Message(Buffer.from('hello world\r'), mindrayBs.profile, hl7Options());
    expect(d.kind).toBe('invalid');
    expect(d.decoded.rejections[0]?.reason).toMatch(/not an HL7 message/);
  });
});
