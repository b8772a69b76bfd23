import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeHl7Capture } from '../../drivers/hl7/decode.js';
import { encodeSegment, type FieldValue } from '../../drivers/hl7/encode.js';
import { initialMllpState, mllpStep } from '../../drivers/hl7/mllp.js';
import { parseMessage, valueAt } from '../../drivers/hl7/parse.js';
import { delimiterSets } from './arbitraries.js';
import { allFixtures, mindrayBs } from './fixtures.js';
import { mllp } from './mnemonic.js';
import { expectSent, wireReadings } from './sent.js';

const stream = Buffer.concat(allFixtures.map((f) => mllp(f.payload)));

function framedMessages(chunks: Buffer[]): string[] {
  let state = initialMllpState;
  const out: string[] = [];
  for (const chunk of chunks) {
    const step = mllpStep(state, chunk, 1 << 20);
    state = step.state;
    for (const e of step.effects) if (e.kind === 'message') out.push(e.raw.toString('latin1'));
  }
  return out;
}

describe('chunking', () => {
  const whole = framedMessages([stream]);

  test('splitting the stream at every byte boundary gives the same messages', () => {
    expect(whole).toEqual(allFixtures.map((f) => f.payload));
    for (let i = 0; i <= stream.length; i += 1) {
      expect(framedMessages([stream.subarray(0, i), stream.subarray(i)])).toEqual(whole);
    }
  });

  test('any chunking gives the same messages', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 40 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const chunks = points.slice(1).map((end, i) => stream.subarray(points[i]!, end));
        expect(framedMessages(chunks)).toEqual(whole);
      }),
    );
  });
});

describe('corruption', () => {
  const fixture = mindrayBs;
  const raw = mllp(fixture.payload);
  const edit = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), byte: fc.constant(0) }),
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  );

  test('never crashes and never yields a result whose parts were not sent', () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 8 }), (edits) => {
        const bytes = [...raw];
        for (const e of edits) {
          const at = e.at % (bytes.length + 1);
          if (e.kind === 'set') bytes[at % bytes.length] = e.byte;
          else if (e.kind === 'delete') bytes.splice(at % bytes.length, 1);
          else bytes.splice(at, 0, e.byte);
        }
        const corrupted = Buffer.from(bytes);
        const text = corrupted.toString('latin1');
        const readings = wireReadings(corrupted);
        const decoded = decodeHl7Capture(corrupted, fixture.profile, fixture.options);
        const results = decoded.flatMap((m) => m.results);
        expect(results.length).toBeLessThanOrEqual((text.match(/OBX/g) ?? []).length);
        for (const r of results) {
          expectSent(readings, r.accession);
          expectSent(readings, r.source.analyzerCode);
          // A repeated OBX-5 is read as lines, one per repetition: each line was sent.
          for (const line of r.valueText.split('\n')) expectSent(readings, line);
          expect(fixture.profile.mapping.map((m) => m.loinc)).toContain(r.analyteLoinc);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('a corrupted byte pair that is valid UTF-8 is read as UTF-8, and the result names what was sent', () => {
    // Found by the property above (seed 1564843983): bytes C3 80 in OBR-2 of a message declared ASCII.
    const bytes = Buffer.from(raw);
    const at = bytes.indexOf('OBR|1|') + 'OBR|1|'.length;
    bytes[at] = 0xc3;
    bytes[at + 1] = 0x80;
    const results = decodeHl7Capture(bytes, fixture.profile, fixture.options).flatMap((m) => m.results);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) {
      expect(r.accession.startsWith('\u00c0')).toBe(true);
      expectSent(wireReadings(bytes), r.accession);
    }
  });

  test('random bytes never crash the decoder', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (data) => {
        const decoded = decodeHl7Capture(Buffer.from(data), fixture.profile, fixture.options);
        expect(decoded.flatMap((m) => m.results)).toEqual([]);
      }),
    );
  });
});

describe('escapes and repetitions round-trip', () => {
  const leaf = fc.string({ unit: fc.constantFrom(...'ab1 .|^~\\&#!@$%*+\r\néß'.split('')), maxLength: 8 });
  const field: fc.Arbitrary<FieldValue> = fc.array(fc.array(fc.array(leaf, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }), {
    minLength: 1,
    maxLength: 3,
  });

  test('every leaf reads back as written, whatever the delimiters', () => {
    fc.assert(
      fc.property(delimiterSets, fc.array(field, { minLength: 1, maxLength: 5 }), (d, fields) => {
        const text = [encodeSegment('MSH', [[[['APP']]]], d), encodeSegment('OBX', fields, d)].join('\r');
        const parsed = parseMessage(text);
        if (parsed.kind !== 'message') throw new Error(parsed.reason);
        expect(parsed.message.delimiters).toMatchObject(d);
        const obx = parsed.message.segments[1]!;
        fields.forEach((f, fi) =>
          f.forEach((rep, ri) =>
            rep.forEach((comp, ci) =>
              comp.forEach((sub, si) => {
                expect(valueAt(obx, d, { field: fi + 1, repetition: ri, component: ci + 1, subcomponent: si + 1 })).toBe(sub);
              }),
            ),
          ),
        );
      }),
      { numRuns: 500 },
    );
  });
});
