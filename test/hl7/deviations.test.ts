// Per-instrument HL7 deviations and hostile values: the unit as the whole of OBX-6, delimiters outside the Basic
// Multilingual Plane, an accession that is only control characters.
import { describe, expect, it } from 'vitest';
import { decodeHl7Message } from '../../drivers/hl7/message.js';
import { hl7Options, type Hl7OptionsInput } from '../../drivers/hl7/options.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';

const profile: InstrumentProfile = {
  id: 'hem-1',
  gatewayId: 'gw-test',
  timezone: 'UTC',
  mapping: [
    { code: 'RBC', loinc: '789-8', unit: '10^6/uL' },
    { code: 'WBC', loinc: '6690-2' },
  ],
};

const message = (obx: string, obr = 'OBR|1||S-1001|CBC|||20260701101500', msh = 'MSH|^~\\&|HEM|LAB|||20260701101600||ORU^R01|77|P|2.5') =>
  [msh, 'PID|1', obr, obx].join('\r') + '\r';

const decode = (text: string, options: Hl7OptionsInput = {}, charset: 'latin1' | 'utf8' = 'latin1') =>
  decodeHl7Message(Buffer.from(text, charset), profile, hl7Options(options));

describe('HL7 deviations', () => {
  it('unit: field reads the whole of OBX-6 for analyzers that write 10^6/uL unescaped', () => {
    const text = message('OBX|1|NM|RBC||4.51|10^6/uL|4.2-5.4|N|||F|||20260701101500');
    expect(decode(text, { unit: 'field' }).decoded.results[0]).toMatchObject({ unit: '10^6/uL', value: 4.51 });
    // Read by the standard (OBX-6.1), the unit is `10` and the mapping rejects it with its reason.
    expect(decode(text).decoded.rejections[0]?.reason).toMatch(/unit '10' for test code 'RBC' differs from the mapping's '10\^6\/uL'/);
  });

  it('an escaped component separator in OBX-6 reads the same under both', () => {
    const text = message('OBX|1|NM|RBC||4.51|10\\S\\6/uL|4.2-5.4|N|||F|||20260701101500');
    expect(decode(text).decoded.results[0]?.unit).toBe('10^6/uL');
    expect(decode(text, { unit: 'field' }).decoded.results[0]?.unit).toBe('10^6/uL');
  });

  it('a delimiter outside the Basic Multilingual Plane is refused, never split into lone surrogates', () => {
    for (const msh of ['MSH\u{1F600}^~\\&\u{1F600}HEM', 'MSH|^~\\\u{1F600}|HEM']) {
      const d = decode(message('OBX|1|NM|WBC||7.2|10*3/uL||N|||F|||20260701101500', undefined, `${msh}|LAB|||20260701101600||ORU^R01|77|P|2.5`), {}, 'utf8');
      expect(d.kind).toBe('invalid');
      expect(JSON.stringify(d.decoded)).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    }
  });

  it('an accession of only NUL or only control characters is rejected, not loaded', () => {
    for (const accession of ['\\X00\\', '\\X0001\\', '\\X1F\\ \\X7F\\']) {
      const d = decode(message('OBX|1|NM|WBC||7.2|10*3/uL||N|||F|||20260701101500', `OBR|1||${accession}|CBC|||20260701101500`)).decoded;
      expect(d.results).toEqual([]);
      expect(d.rejections[0]?.reason).toMatch(/accession.*printable/);
    }
  });
});
