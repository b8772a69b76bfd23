// What labgate writes to an HL7 instrument: in its charset, escaped, checked. For any text, the MLLP blocks read back
// through the project's own frame reader and parser to exactly the segments and values meant, and hold no control byte
// but the segment terminators.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Delimiters } from '../../drivers/hl7/delimiters.js';
import { encodeMessage, type FieldValue, type SegmentValue } from '../../drivers/hl7/encode.js';
import { initialMllpState, mllpStep } from '../../drivers/hl7/mllp.js';
import { parseMessage, valueAt } from '../../drivers/hl7/parse.js';
import { framed } from '../../drivers/hl7/reply.js';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import { fitToCharset, type Charset } from '../../src/charset.js';
import { limsText, regionalNames } from '../fixtures/lims-text.js';
import { delimiterSets } from './arbitraries.js';
import { makeContext, settle } from './context.js';
import { mindrayBs } from './fixtures.js';
import { mllp } from './mnemonic.js';

const standard: Delimiters = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };

/** The payloads of every complete MLLP block in `wire`, and whether anything else was there. */
function blocks(wire: Buffer): { payloads: Buffer[]; other: string[] } {
  const { state, effects } = mllpStep(initialMllpState, wire, 1 << 20);
  const payloads = effects.flatMap((e) => (e.kind === 'message' ? [e.raw] : []));
  const other = effects.filter((e) => e.kind !== 'message').map((e) => e.kind);
  return { payloads, other: state.phase === 'idle' ? other : [...other, state.phase] };
}

function controlBytes(payload: Buffer): number[] {
  return [...payload].filter((b) => (b < 0x20 || b === 0x7f) && b !== 0x0d);
}

describe('HL7 text written to an instrument', () => {
  test('an ACK echoing a control id that held \\X1C\\ keeps the MLLP block whole; MSA-2 reads back as the analyzer sent it', async () => {
    const h = makeContext(mindrayBs.profile);
    createHl7Runner(h.ctx, mindrayBs.options).start();
    h.transport.emitData(mllp(mindrayBs.payload.replace('||ORU^R01|12|', '||ORU^R01|1\\X1C\\2\\X0B0D\\3|')));
    await settle();
    const wire = Buffer.concat(h.transport.written);
    const { payloads, other } = blocks(wire);
    expect(other).toEqual([]);
    expect(payloads).toHaveLength(1);
    expect(controlBytes(payloads[0]!)).toEqual([]);
    const parsed = parseMessage(payloads[0]!.toString('latin1'));
    if (parsed.kind !== 'message') throw new Error(parsed.reason);
    expect(valueAt(parsed.message.segments[1]!, parsed.message.delimiters, { field: 2, component: 1, subcomponent: 1 })).toBe('1\x1c2\x0b\r3');
  });

  test('a character Latin-1 cannot carry is replaced by its base letter or ?, never by its low byte, and counted', () => {
    const ack: SegmentValue[] = [
      { id: 'MSH', fields: [[[['LAB\u011cATE']]]] },
      { id: 'MSA', fields: [[[['AE']]], [[['1']]], [[['Nováček Ţuţuianu Şahin Wąsowski 王']]]] },
    ];
    const encoded = encodeMessage(ack, standard, 'latin1');
    if (encoded.kind !== 'encoded') throw new Error(encoded.reason);
    expect(encoded.payload.toString('latin1')).toBe('MSH|^~\\&|LABGATE\rMSA|AE|1|Novácek Tutuianu Sahin Wasowski ?\r');
    expect(encoded.substituted).toBe(7);
    expect(encodeMessage(ack, standard, 'utf8')).toMatchObject({ kind: 'encoded', substituted: 0 });
  });

  test('the runner counts what it replaced and logs the count only', async () => {
    const h = makeContext(mindrayBs.profile);
    createHl7Runner(h.ctx, { ...mindrayBs.options, charset: 'latin1', sendingApplication: 'LAB\u011cATE' }).start();
    h.transport.emitData(mllp(mindrayBs.payload));
    await settle();
    expect(h.transport.written[0]!.toString('latin1')).toContain('MSH|^~\\&|LABGATE|');
    expect(h.events).toContainEqual({ kind: 'substituted', characters: 1 });
    expect(h.logs.filter((l) => l.includes('replaced'))).toEqual([expect.stringMatching(/\{"characters":1\}$/)]);
  });

  test('what the delimiters cannot carry is refused, not written', () => {
    const odd: Delimiters = { ...standard, field: '\u0142' };
    expect(encodeMessage([{ id: 'MSH', fields: [] }], odd, 'latin1')).toMatchObject({ kind: 'refused' });
    expect(framed([[{ id: 'MSH', fields: [] }]], odd, 'latin1')).toMatchObject({ frames: [], refused: [expect.any(String)] });
  });
});

describe('HL7 encoder properties', () => {
  const field: fc.Arbitrary<FieldValue> = fc.array(fc.array(fc.array(limsText, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }), {
    minLength: 1,
    maxLength: 2,
  });
  const segment = fc.record({ id: fc.constantFrom('PID', 'OBR', 'SPM', 'NTE', 'MSA', 'ERR'), fields: fc.array(field, { minLength: 1, maxLength: 4 }) });
  const charset = fc.constantFrom<Charset>('latin1', 'utf8');

  test('for any text, one MLLP block per message, the same segments, every value as fitted, no control byte', () => {
    fc.assert(
      fc.property(delimiterSets, charset, fc.array(segment, { minLength: 1, maxLength: 4 }), (d, cs, body) => {
        const segments: SegmentValue[] = [{ id: 'MSH', fields: [[[['LABGATE']]]] }, ...body];
        const replies = framed([segments, segments], d, cs);
        expect(replies.refused).toEqual([]);
        const { payloads, other } = blocks(Buffer.concat(replies.frames));
        expect(other).toEqual([]);
        expect(payloads).toHaveLength(2);
        let expectedSubstitutions = 0;
        for (const payload of payloads) {
          expect(controlBytes(payload)).toEqual([]);
          const parsed = parseMessage(payload.toString(cs));
          if (parsed.kind !== 'message') throw new Error(parsed.reason);
          expect(parsed.message.segments.map((s) => s.id)).toEqual(segments.map((s) => s.id));
          body.forEach((s, i) =>
            s.fields.forEach((f, fi) =>
              f.forEach((rep, ri) =>
                rep.forEach((comp, ci) =>
                  comp.forEach((leaf, si) => {
                    const meant = fitToCharset(leaf, cs);
                    expectedSubstitutions += meant.substituted;
                    const at = { field: fi + 1, repetition: ri, component: ci + 1, subcomponent: si + 1 };
                    expect(valueAt(parsed.message.segments[i + 1]!, d, at)).toBe(meant.text);
                  }),
                ),
              ),
            ),
          );
        }
        expect(replies.substituted).toBe(expectedSubstitutions);
      }),
      { numRuns: 400 },
    );
  });

  test('names a Latin-1 analyzer cannot carry are written as readable Latin-1 letters', () => {
    for (const name of regionalNames.slice(0, 9)) {
      const fitted = fitToCharset(name, 'latin1').text;
      expect(fitted).toMatch(/^[A-Za-z\u00c0-\u00ff ]+$/);
    }
  });
});
