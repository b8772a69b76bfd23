// Fuzzing the HL7 decoder (MLLP framing, parsing, ORU to keyed results): it never throws, holds at most one
// message (plus the head of a refused one) however the bytes arrive, never yields a result whose parts were not
// sent, and takes time linear in the bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bareStep, initialBareState } from '../../drivers/hl7/bare.js';
import { decodeHl7Capture } from '../../drivers/hl7/decode.js';
import { initialMllpState, mllpStep, type MllpState } from '../../drivers/hl7/mllp.js';
import { hl7Options } from '../../drivers/hl7/options.js';
import { allFixtures, lri251, mindrayBs } from '../hl7/fixtures.js';
import { mllp } from '../hl7/mnemonic.js';
import { expectSent, wireReadings } from '../hl7/sent.js';
import { chunked, mutate } from './astm-wire.js';
import { expectLinear, runs } from './linear.js';

const edit = fc.record({ how: fc.constantFrom('replace', 'insert', 'delete'), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) });
const fixtureArb = fc.constantFrom(...allFixtures);
const stream = (f: (typeof allFixtures)[number]): Buffer => mllp(f.payload);

/** Bytes the MLLP state holds. */
function held(s: MllpState): number {
  if (s.phase === 'idle') return 0;
  return s.phase === 'block' ? s.chunks.reduce((n, c) => n + c.length, 0) : s.head.length;
}

describe('HL7 decoder under fuzzing', () => {
  it('never throws; the framing state never holds more than one message', () => {
    const maxMessageBytes = 2048;
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fixtureArb.map(stream),
            fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
          ),
          { maxLength: 5 },
        ),
        fc.array(edit, { maxLength: 5 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 3 }),
        (parts, edits, sizes) => {
          const wire = mutate(Buffer.concat(parts), edits);
          let state = initialMllpState;
          for (const chunk of chunked(wire, sizes)) {
            state = mllpStep(state, chunk, maxMessageBytes).state;
            expect(held(state)).toBeLessThanOrEqual(maxMessageBytes);
          }
          for (const f of [mindrayBs, lri251]) decodeHl7Capture(wire, f.profile, { ...f.options, maxMessageBytes });
        },
      ),
      { numRuns: runs(400) },
    );
  });

  it('corruption never yields a result whose parts were not sent', () => {
    fc.assert(
      fc.property(fixtureArb, fc.array(edit, { minLength: 1, maxLength: 4 }), (f, edits) => {
        const wire = mutate(stream(f), edits);
        const readings = wireReadings(wire);
        for (const r of decodeHl7Capture(wire, f.profile, f.options).flatMap((m) => m.results)) {
          expectSent(readings, r.accession);
          expectSent(readings, r.source.analyzerCode);
          expect(f.profile.mapping.map((m) => m.loinc)).toContain(r.analyteLoinc);
        }
      }),
      { numRuns: runs(500) },
    );
  });
});

describe('HL7 decoder: time linear in the bytes', () => {
  const f = lri251;
  const o = hl7Options({ ...f.options, maxMessageBytes: 16 * 1024 * 1024 });
  const obx = f.payload.split('\r').find((s) => s.startsWith('OBX|1|'))!;
  const withObx = (n: number): string => f.payload.replace(obx, Array.from({ length: n }, () => obx).join('\r'));

  it('many messages, framed and bare', () => {
    expectLinear(
      'MLLP messages',
      (scale) => Buffer.concat(Array.from({ length: 2 * scale }, () => mllp(f.payload))),
      (wire) => decodeHl7Capture(wire, f.profile, o),
    );
    expectLinear(
      'bare messages',
      (scale) => Buffer.from(Array.from({ length: 2 * scale }, () => f.payload).join(''), 'latin1'),
      (wire) => decodeHl7Capture(wire, f.profile, { ...o, framing: 'none' }),
    );
  });

  it('one message of many OBX segments', () => {
    expectLinear(
      'OBX segments',
      (scale) => mllp(withObx(10 * scale)),
      (wire) => decodeHl7Capture(wire, f.profile, o),
    );
  });

  it('long fields: repetitions, components, escapes (no long run of digits: the number reader is measured on its own)', () => {
    const field = (n: number): string => f.payload.replace('|mg/dL^mg/dL^UCUM|', `|${'a^b~c&d\\T\\e'.repeat(n)}|`);
    expectLinear(
      'long fields',
      (scale) => mllp(field(60 * scale)),
      (wire) => decodeHl7Capture(wire, f.profile, o),
    );
  });

  it('a block a byte at a time, and noise between blocks', () => {
    const block = (scale: number): Buffer[] => chunked(mllp(withObx(5 * scale)), [1]);
    expectLinear('MLLP byte by byte', block, (chunks) => chunks.reduce((s, c) => mllpStep(s, c, o.maxMessageBytes).state, initialMllpState));
    const noise = (scale: number): Buffer[] => Array.from({ length: 40 * scale }, () => Buffer.from('noise outside any block '));
    expectLinear('noise', noise, (chunks) => chunks.reduce((s, c) => mllpStep(s, c, o.maxMessageBytes).state, initialMllpState));
    const bare = (scale: number): Buffer[] => chunked(Buffer.from(withObx(5 * scale), 'latin1'), [1]);
    expectLinear('bare byte by byte', bare, (chunks) => chunks.reduce((s, c) => bareStep(s, c, o.maxMessageBytes).state, initialBareState));
  });
});
