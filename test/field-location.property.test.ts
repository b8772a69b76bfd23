// Every location the grammar accepts reads what it names: a value placed at a random place of a random segment is
// read back through the option's own parsing and the driver's own reading, whole field, component or subcomponent.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeAstmText } from '../drivers/astm/decode.js';
import { parseAstmOptions } from '../drivers/astm/options.js';
import { encodeSegment, type FieldValue } from '../drivers/hl7/encode.js';
import { decodeHl7Message } from '../drivers/hl7/message.js';
import { hl7Options } from '../drivers/hl7/options.js';
import { astmGrammar, formatFieldLocation, hl7Grammar, parseFieldLocation, type FieldLocation } from '../src/field-location.js';

const d = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };
// Leaves with no character HL7 gives meaning to, so the text a location names is known by construction.
const leaf = fc.stringMatching(/^[A-Za-z0-9 .-]{0,6}$/);
const field = fc.array(fc.array(leaf, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 });

/** The text a location names in a field built from leaves, as a person reading the manual expects it. */
function expected(comps: string[][], at: FieldLocation): string {
  if (at.component === undefined) return comps.map((c) => c.join('&')).join('^');
  const subs = comps[at.component - 1] ?? [];
  if (at.subcomponent === undefined) return subs.join('&');
  return subs[at.subcomponent - 1] ?? '';
}

const segmentIds = ['PID', 'PV1', 'ORC', 'OBR', 'SAC', 'SPM', 'ZLB'];
const location = fc.record({
  segment: fc.constantFrom(...segmentIds),
  field: fc.integer({ min: 1, max: 12 }),
  component: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  subcomponent: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
});

// A message in which segment `at.segment` holds `value` at field `at.field`, around one result.
function message(at: FieldLocation, value: FieldValue): string {
  const seg = (id: string): string =>
    encodeSegment(
      id,
      Array.from({ length: 12 }, (_, i) => (id === at.segment && i + 1 === at.field ? value : [[['']]])),
      d,
    );
  return [
    'MSH|^~\\&|A|B|||20241105101500||ORU^R01|M-1|P|2.5.1',
    seg('PID'),
    seg('PV1'),
    seg('ZLB'),
    seg('SAC'),
    seg('ORC'),
    seg('OBR'),
    'OBX|1|NM|GLU||5.6|mmol/L|||||F|||20241105101000',
    seg('SPM'),
  ].join('\r');
}

describe('field locations', () => {
  test('every location the grammar accepts reads what it names', () => {
    fc.assert(
      fc.property(location, field, (raw, comps) => {
        const at: FieldLocation = { segment: raw.segment, field: raw.field, ...(raw.component ? { component: raw.component } : {}) };
        if (raw.component && raw.subcomponent) at.subcomponent = raw.subcomponent;
        const text = formatFieldLocation(at, hl7Grammar);
        expect(parseFieldLocation(text, hl7Grammar)).toEqual({ kind: 'location', location: at });
        const options = hl7Options({ accession: [text], code: ['OBX-3'] });
        expect(options.accession).toEqual([at]);
        const profile = { id: 'i', gatewayId: 'g', timezone: 'UTC', mapping: [{ code: 'GLU', loinc: '2345-7', unit: 'mmol/L' }] };
        const decoded = decodeHl7Message(Buffer.from(message(at, [comps]), 'latin1'), profile, options).decoded;
        const want = expected(comps, at);
        const trimmed = want.trim();
        if (trimmed === '') expect(decoded.rejections.map((r) => r.reason)).toEqual([`no accession in ${text}`]);
        else if (/[\^&]/.test(want))
          expect(decoded.rejections.map((r) => r.reason)).toEqual([`accession location ${text} holds several parts: name one (e.g. ${text}.1)`]);
        else expect(decoded.results.map((r) => r.accession)).toEqual([trimmed]);
      }),
      { numRuns: 400 },
    );
  });

  test('ASTM: every location the grammar accepts reads what it names (no subcomponents in LIS2-A2)', () => {
    const astmLocation = fc.record({
      segment: fc.constantFrom('O', 'P'),
      field: fc.integer({ min: 3, max: 12 }),
      component: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    });
    const components = fc.array(fc.stringMatching(/^[A-Za-z0-9 .-]{0,6}$/), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(astmLocation, components, (raw, comps) => {
        const at: FieldLocation = { segment: raw.segment, field: raw.field, ...(raw.component ? { component: raw.component } : {}) };
        const text = formatFieldLocation(at, astmGrammar);
        const options = parseAstmOptions({ accession: text });
        expect(options.accession).toEqual(at);
        const record = (type: string): string =>
          [type, '1', ...Array.from({ length: 10 }, (_, i) => (type === at.segment && i + 3 === at.field ? comps.join('^') : ''))].join('|');
        const payload = ['H|\\^&', record('P'), record('O'), 'R|1|^^^GLU|5|mmol/L||||F||||20260701113015', 'L|1'].join('\r') + '\r';
        const profile = { id: 'i', gatewayId: 'g', timezone: 'UTC', mapping: [{ code: 'GLU', loinc: '2345-7', unit: 'mmol/L' }] };
        const decoded = decodeAstmText(Buffer.from(payload, 'latin1'), profile, options);
        const want = at.component === undefined ? comps.join('^') : (comps[at.component - 1] ?? '');
        if (want.trim() === '') expect(decoded.rejections.map((r) => r.reason)).toEqual([`no accession in ${text}`]);
        else if (want.includes('^'))
          expect(decoded.rejections.map((r) => r.reason)).toEqual([`accession location ${text} holds several parts: name one (e.g. ${text}.1)`]);
        else expect(decoded.results.map((r) => r.accession)).toEqual([want.trim()]);
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    ['obr-3', "'obr' is not a segment id such as OBR or PID"],
    ['OBR3', "expected a segment id such as OBR or PID, '-' and a field number"],
    ['OBR-0', "field '0' is not a number from 1 to 999"],
    ['OBR-3.x', "component 'x' is not a number from 1 to 999"],
    ['OBR-3.1.1.1', 'at most field.component.subcomponent'],
    ['OBR-', "field '' is not a number from 1 to 999"],
  ])('%s is refused with its reason', (text, why) => {
    const reading = parseFieldLocation(text, hl7Grammar);
    expect(reading).toEqual({ kind: 'invalid', reason: `'${text}' is not a field location: ${why} (e.g. ${hl7Grammar.example})` });
  });
});
