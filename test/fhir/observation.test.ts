// Every Observation labgate produces validates against the R4 base profiles (Medplum's validator with the R4
// definitions, plus the required bindings it leaves unchecked), for the mapping table's cases and for any result a
// driver may produce (property test); and the mapping says no more than the analyzer said.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateR4 } from '../../src/fhir-server/validate.js';
import { buildPayload } from '../../src/payload.js';
import { comparators, keyedResultSchema, resultStatuses, type KeyedResultInput } from '../../src/result.js';
import { ANALYZER_STATUS_EXTENSION, observationStatus, toObservation, type FhirObservation } from '../../src/sinks/fhir-observation.js';
import { sampleResult } from '../../src/lims-server/sample-rows.js';
import { SYSTEMS } from './harness.js';

const options = { ...SYSTEMS, ucumUnits: { 'x10^3/uL': '10*3/uL' } };

function observe(overrides: Partial<KeyedResultInput>): FhirObservation {
  const result = keyedResultSchema.parse(sampleResult(1, overrides));
  return toObservation(buildPayload(result, { receivedAt: Date.UTC(2026, 6, 1, 8, 0, 1, 250), rawSha256: 'a'.repeat(64) }), options);
}

function valid(o: FhirObservation): FhirObservation {
  expect(validateR4(o), JSON.stringify(o)).toEqual([]);
  return o;
}

describe('result → Observation', () => {
  it('the whole document for a plain potassium result', () => {
    const o = valid(observe({}));
    expect(o).toEqual({
      resourceType: 'Observation',
      extension: [{ url: 'urn:labgate:fhir:extension:analyzer-result-status', valueCode: 'F' }],
      identifier: [{ system: 'urn:labgate:dedup-key', value: expect.stringMatching(/^[0-9a-f]{64}$/) }],
      status: 'final',
      category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory', display: 'Laboratory' }] }],
      code: {
        coding: [
          { system: 'http://loinc.org', code: '2823-3' },
          { system: 'urn:labgate:test-code:chem-1', code: 'K' },
        ],
      },
      effectiveDateTime: '2026-07-01T08:00:01+00:00',
      issued: '2026-07-01T08:00:01.250Z',
      specimen: { identifier: { system: 'urn:labgate:accession', value: 'A100001' }, display: 'Specimen A100001' },
      device: { identifier: { system: 'urn:labgate:instrument', value: 'chem-1' }, display: 'chem-1' },
      valueQuantity: { value: 3.6, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
      referenceRange: [
        {
          low: { value: 3.5, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
          high: { value: 5.1, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
          text: '3.5-5.1',
        },
      ],
    });
  });

  it('claims no issued time when the gateway clock was not synchronised at receipt', () => {
    const result = keyedResultSchema.parse(sampleResult(1, {}));
    const payload = buildPayload(result, { receivedAt: Date.UTC(1970, 0, 1, 0, 3), rawSha256: 'a'.repeat(64), clock: 'unsynchronised' });
    const o = valid(toObservation(payload, options));
    expect(o).not.toHaveProperty('issued');
    expect(o.effectiveDateTime).toBe('2026-07-01T08:00:01+00:00');
  });

  it.each(resultStatuses.map((s) => [s, observationStatus[s]]))('status %s → %s', (status, fhir) => {
    expect(valid(observe({ status })).status).toBe(fhir);
  });

  it('a censored value is its comparator and bound, never a plain number', () => {
    const o = valid(observe({ valueText: '<0.5', value: null, comparator: '<', bound: 0.5 }));
    expect(o.valueQuantity).toEqual({ value: 0.5, comparator: '<', unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' });
  });

  it('a unit that is not UCUM gets no UCUM code: the value travels as the analyzer wrote it', () => {
    const o = valid(observe({ valueText: '12.5', value: 12.5, unit: 'x10E3/ul' }));
    expect(o.valueQuantity).toBeUndefined();
    expect(o.valueString).toBe('12.5 x10E3/ul');
    expect(o.referenceRange).toEqual([{ text: '3.5-5.1' }]);
  });

  it("a configured UCUM spelling of an analyzer unit: the code is UCUM, the unit text stays the analyzer's", () => {
    expect(valid(observe({ valueText: '12.5', value: 12.5, unit: 'x10^3/uL' })).valueQuantity).toEqual({
      value: 12.5,
      unit: 'x10^3/uL',
      system: 'http://unitsofmeasure.org',
      code: '10*3/uL',
    });
  });

  it('a text result is a string; a result with no value has none; a number without unit is a bare quantity', () => {
    expect(valid(observe({ valueText: 'POSITIVE', value: null, unit: null })).valueString).toBe('POSITIVE');
    const none = valid(observe({ valueText: '', value: null, unit: null, status: 'cannot-be-done' }));
    expect(none.valueQuantity ?? none.valueString).toBeUndefined();
    expect(valid(observe({ valueText: '1.1', value: 1.1, unit: null, referenceRange: '0.8-1.2' }))).toMatchObject({
      valueQuantity: { value: 1.1 },
      referenceRange: [{ low: { value: 0.8 }, high: { value: 1.2 }, text: '0.8-1.2' }],
    });
  });

  it("flags: v3 ObservationInterpretation codes where they are one, the analyzer's text otherwise", () => {
    expect(valid(observe({ flags: ['HH', 'A', '*crit'] })).interpretation).toEqual([
      { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', code: 'HH' }] },
      { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', code: 'A' }] },
      { text: '*crit' },
    ]);
  });

  it("the analyzer's own status letter is kept in an extension when the result has one", () => {
    expect(valid(observe({ status: 'deleted', statusCode: 'D' }))).toMatchObject({
      status: 'entered-in-error',
      extension: [{ url: ANALYZER_STATUS_EXTENSION, valueCode: 'D' }],
    });
    expect(valid(observe({ statusCode: null })).extension).toBeUndefined();
  });

  it('a payload stored before bound and statusCode existed (`<0.5` with value 0.5) is still a censored quantity', () => {
    const old = { ...sampleResult(1), valueText: '<0.5', value: 0.5, comparator: '<' } as Record<string, unknown>;
    delete old.bound;
    delete old.statusCode;
    const payload = { ...buildPayload(keyedResultSchema.parse(sampleResult(1)), { receivedAt: 0, rawSha256: 'a'.repeat(64) }), result: old };
    expect(valid(toObservation(payload as never, options)).valueQuantity).toMatchObject({ value: 0.5, comparator: '<' });
  });
});

const text = fc.string({
  unit: fc.oneof(fc.constantFrom('a', 'Z', '0', '.', ' ', '<', '-', '^', '\t', 'µ', '\u0001', '\u00a0'), fc.string({ minLength: 1, maxLength: 1 })),
});
const result = fc.record({
  accession: text.filter((s) => /[A-Za-z0-9]/.test(s)),
  analyzerCode: text.filter((s) => s.trim().length > 0),
  valueText: text,
  value: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
  comparator: fc.option(fc.constantFrom(...comparators), { nil: null }),
  statusCode: fc.option(text, { nil: null }),
  unit: fc.option(fc.oneof(fc.constantFrom('mmol/L', 'x10^3/uL', '%', '10*9/L', 'mg/dL', '', ' ', 'toString', '__proto__'), text), { nil: null }),
  status: fc.constantFrom(...resultStatuses),
  flags: fc.array(fc.oneof(fc.constantFrom('H', 'L', 'HH', 'N', 'A', '<', 'W'), text), { maxLength: 3 }),
  referenceRange: fc.option(fc.oneof(fc.constantFrom('3.5-5.1', '-1 - 1', '< 5', '0.5 to 2'), text), { nil: null }),
  qc: fc.boolean(),
});

it('property: any result a driver may produce becomes a valid R4 Observation', () => {
  fc.assert(
    fc.property(result, (r) => {
      const censored = r.comparator !== null;
      const parsed = keyedResultSchema.safeParse(
        sampleResult(1, {
          ...r,
          value: censored ? null : r.value,
          bound: censored ? (r.value ?? 1) : null,
          source: { gatewayId: 'gw', driver: 'astm', analyzerCode: r.analyzerCode, captureId: 1 },
        }),
      );
      if (!parsed.success) return;
      const o = toObservation(buildPayload(parsed.data, { receivedAt: 0, rawSha256: 'a'.repeat(64) }), options);
      expect(validateR4(o), JSON.stringify(o)).toEqual([]);
    }),
    { numRuns: 400 },
  );
});
