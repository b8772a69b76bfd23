// The three result structures the driver reads (ORU^R01, OUL^R21, OUL^R22) give the same keys, statuses and
// rejections for the same observations; any other message type is journaled and rejected with its type.
import { describe, expect, test } from 'vitest';
import { decodeHl7Message } from '../../drivers/hl7/message.js';
import { hl7Options, type Hl7OptionsInput } from '../../drivers/hl7/options.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { dedupKey } from '../../src/result.js';
import { segments } from './mnemonic.js';

const profile: InstrumentProfile = {
  id: 'chem-1',
  gatewayId: 'gw-test',
  timezone: 'Europe/Zurich',
  mapping: [
    { code: 'GLU', loinc: '2345-7', unit: 'mmol/L' },
    { code: 'NA', loinc: '2951-2', unit: 'mmol/L' },
    { code: 'NOTE', loinc: '8251-1' },
  ],
};

const decode = (payload: string, options: Hl7OptionsInput) => decodeHl7Message(Buffer.from(payload, 'latin1'), profile, hl7Options(options));
const summary = (payload: string, options: Hl7OptionsInput) => {
  const { decoded } = decode(payload, options);
  return {
    results: decoded.results.map((r) => [dedupKey(r), r.accession, r.analyteLoinc, r.valueText, r.value, r.status, r.statusCode, r.unit]),
    rejections: decoded.rejections.map((r) => [r.analyzerCode, r.accession, r.reason]),
  };
};

// ORU^R01 (Chapter 7, 7.3.1): ORC before OBR, the specimen after the results; OBX-2 given.
const oru = segments(
  'MSH|^~\\&|CHEM|LAB|LIS|HOSP|20241105101500||ORU^R01^ORU_R01|M-1|P|2.5.1',
  'PID|1||PAT-9^^^HOSP^MR||Doe^Jane',
  'ORC|RE|PL-1|FL-1',
  'OBR|1|PL-1|S-4471^LAB|CHEM^Chemistry|||20241105100000',
  'OBX|1|NM|GLU^Glucose^99ROC||5.6|mmol/L|3.9-6.1|N|||F|||20241105101000',
  'OBX|2|NM|NA^Sodium^99ROC||14O|mmol/L|||||F|||20241105101000',
  'OBX|3|ST|NOTE^Note^99ROC||lipemic ^ see \\F\\ log||||||C|||20241105101000',
  'SPM|1|S-4471&LAB||SER^Serum^HL70487',
  'OBX|1|NM|VOL^Volume||3.2|mL',
);

// OUL^R21 as laboratory middleware (cobas IT) sends it (7.3.5): the container in SAC before its order, OBX-2 empty,
// separators in OBX-5 escaped.
const oulR21 = segments(
  'MSH|^~\\&|cobas IT|LAB|LIS|HOSP|20241105101500||OUL^R21|M-2|P|2.5',
  'PID|1||PAT-9^^^HOSP^MR',
  'SAC|||S-4471^LAB',
  'ORC|SC|PL-1|FL-1',
  'OBR|1|PL-1|FL-1|CHEM^Chemistry|||20241105100000',
  'OBX|1||GLU^Glucose^99ROC||5.6|mmol/L|3.9-6.1|N|||F|||20241105101000',
  'OBX|2|NM|NA^Sodium^99ROC||14O|mmol/L|||||F|||20241105101000',
  'OBX|3||NOTE^Note^99ROC||lipemic \\S\\ see \\F\\ log||||||C|||20241105101000',
);

// OUL^R22 as an IHE LAW analyzer sends it (7.3.6): the specimen first with its own OBX, then each OBR with its ORC after it.
const oulR22 = segments(
  'MSH|^~\\&|ANALYZER|LAB|LIS|HOSP|20241105101500||OUL^R22^OUL_R22|M-3|P|2.5.1|||NE|AL||UNICODE UTF-8|||LAB-29^IHE',
  'PID|1||PAT-9^^^HOSP^MR',
  'SPM|1|S-4471&LAB||SER^Serum^HL70487',
  'OBX|1|NM|VOL^Volume||3.2|mL',
  'SAC|||S-4471^LAB',
  'OBR|1|PL-1|FL-1|GLU^Glucose^99ROC',
  'ORC|SC|PL-1|FL-1||CM',
  'OBX|1|NM|GLU^Glucose^99ROC||5.6|mmol/L|3.9-6.1|N|||F|||20241105101000',
  'OBR|2|PL-2|FL-2|NA^Sodium^99ROC',
  'ORC|SC|PL-2|FL-2||CM',
  'OBX|1|NM|NA^Sodium^99ROC||14O|mmol/L|||||F|||20241105101000',
  'OBR|3|PL-3|FL-3|NOTE^Note^99ROC',
  'OBX|1|ST|NOTE^Note^99ROC||lipemic \\S\\ see \\F\\ log||||||C|||20241105101000',
);

describe('result structures', () => {
  test('ORU^R01, OUL^R21 and OUL^R22 give the same keys, statuses and rejections', () => {
    const fromOru = summary(oru, { accession: ['OBR-3.1'] });
    expect(fromOru.results.map((r) => r.slice(1))).toEqual([
      ['S-4471', '2345-7', '5.6', 5.6, 'final', 'F', 'mmol/L'],
      ['S-4471', '8251-1', 'lipemic ^ see | log', null, 'correction', 'C', null],
    ]);
    expect(fromOru.rejections).toEqual([['NA', 'S-4471', "OBX-5 '14O' is not a number (OBX-2 NM): not a number"]]);
    expect(summary(oulR21, { accession: ['SAC-3.1'] })).toEqual(fromOru);
    expect(summary(oulR22, { accession: ['SPM-2.1.1'] })).toEqual(fromOru);
  });

  test('the specimen of an OUL^R22 belongs to the orders after it; its own OBX are not results', () => {
    const twoSpecimens = oulR22.replace('OBR|3|', 'SPM|2|S-4472&LAB||SER\rOBX|1|NM|VOL^Volume||1.1|mL\rOBR|3|');
    const { decoded } = decode(twoSpecimens, { accession: ['SPM-2.1.1'] });
    expect(decoded.results.map((r) => [r.source.analyzerCode, r.accession])).toEqual([
      ['GLU', 'S-4471'],
      ['NOTE', 'S-4472'],
    ]);
    expect(decoded.rejections.map((r) => r.analyzerCode)).toEqual(['NA']);
  });

  test('an ORC after its OBR (OUL^R22) is that order’s, an ORC before an OBR (ORU^R01, OUL^R21) is the next one’s', () => {
    const r22 = summary(oulR22, { accession: ['ORC-3.1'] });
    expect(r22.results.map((r) => r[1])).toEqual(['FL-1']);
    expect(r22.rejections).toContainEqual(['NOTE', undefined, 'no accession in ORC-3.1']);
    expect(summary(oulR21, { accession: ['ORC-3.1'] }).results.map((r) => r[1])).toEqual(['FL-1', 'FL-1']);
  });

  test.each([
    ['OUL^R23', 'OUL^R23^OUL_R23'],
    ['OUL^R24', 'OUL^R24'],
    ['OML^O21', 'OML^O21^OML_O21'],
    ['ESU^U01', 'ESU^U01'],
    ['ADT', 'ADT'],
  ])('message type %s is journaled and rejected with its type, never committed empty', (text, msh9) => {
    const d = decode(oulR21.replace('OUL^R21', msh9), { accession: ['SAC-3.1'] });
    expect(d.kind).toBe('other');
    expect(d.decoded).toEqual({ results: [], rejections: [{ reason: `message type ${text} is not read` }] });
  });

  test('PID-2 holds the specimen id of some hematology analyzers (OBR-2 and OBR-3 empty)', () => {
    const payload = segments(
      'MSH|^~\\&|HEMA|LAB|||20241105101500||ORU^R01|M-4|P|2.3.1',
      'PID|1|2411050031^^^LAB',
      'OBR|1|||CBC',
      'OBX|1|NM|GLU||5.6|mmol/L|||||F|||20241105101000',
    );
    expect(decode(payload, {}).decoded.rejections[0]?.reason).toBe('no accession in OBR-3.1, OBR-2.1, SPM-2.1.1');
    expect(decode(payload, { accession: ['PID-2.1'] }).decoded.results.map((r) => r.accession)).toEqual(['2411050031']);
  });

  test('an accession location that holds several parts is rejected, naming the part, never keyed on both', () => {
    const { decoded } = decode(oru, { accession: ['OBR-3'] });
    expect(decoded.results).toEqual([]);
    expect(decoded.rejections.map((r) => r.reason)).toContain('accession location OBR-3 holds several parts: name one (e.g. OBR-3.1)');
    expect(decode(oru, { accession: ['OBR-2'] }).decoded.results.map((r) => r.accession)).toEqual(['PL-1', 'PL-1']);
  });
});
