// What labgate writes to an ASTM instrument, for any text the LIMS sends: the frames read back through the project's
// own receiver (link layer, checksums, restricted characters) and record parser to exactly the records meant, as many
// as meant, with no control byte in a frame's text but the record terminators.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { fittedValue, encodeRecords, writesExactly, type RecordValue } from '../../drivers/astm/encode.js';
import { ENQ, EOT } from '../../drivers/astm/frame.js';
import { captureStartState, drive } from '../../drivers/astm/link.js';
import { ordersMessage, writableAnswer, type OutgoingContext } from '../../drivers/astm/order-records.js';
import { parseRecords, unescape, type Delimiters } from '../../drivers/astm/records.js';
import { framesOf } from '../../drivers/astm/sender.js';
import { decodeAstmText, linkConfigOf } from '../../drivers/astm/decode.js';
import type { Charset } from '../../src/charset.js';
import type { InstrumentSpecimen } from '../../src/orders/order.js';
import { limsText } from '../fixtures/lims-text.js';
import { options, profile } from './profile.js';

/** The message texts a receiver commits from `frames` sent in one transfer, and the frames it refused. */
function received(frames: Buffer[], charset: Charset): { texts: string[]; refused: string[] } {
  const texts: string[] = [];
  const refused: string[] = [];
  const o = options({ charset });
  const data = Buffer.concat([Buffer.from([ENQ]), ...frames, Buffer.from([EOT])]);
  drive(captureStartState(linkConfigOf(o)), { kind: 'bytes', data }, (effect) => {
    if (effect.kind === 'event' && (effect.event.kind === 'nak' || effect.event.kind === 'discarded')) refused.push(effect.event.reason);
    if (effect.kind !== 'commit') return;
    texts.push(effect.text.toString(charset));
    return { kind: 'committed', ok: true };
  });
  return { texts, refused };
}

/** The unescaped leaves of a raw field, repeats of components. */
const leaves = (raw: string, d: Delimiters): string[][] => raw.split(d.repeat).map((rep) => rep.split(d.component).map((c) => unescape(c, d)));

/** What each record's fields are meant to read back as: every leaf fitted (encode.ts), an empty field as one empty leaf. */
function meant(records: readonly RecordValue[], d: Delimiters, charset: Charset): string[][][][] {
  return records.map((r) => r.fields.map((f) => (f.length === 0 ? [['']] : f.map((rep) => rep.map((v) => fittedValue(v, d, charset))))));
}

const delimiterSets: fc.Arbitrary<Delimiters> = fc
  .tuple(fc.shuffledSubarray([...'|\\^&~#!@$%*;'], { minLength: 4, maxLength: 4 }), fc.boolean())
  .map(([[field, repeat, component, escape], escaped]) => ({ field: field!, repeat: repeat!, component: component!, escape: escaped ? escape! : null }));

const specimen: fc.Arbitrary<InstrumentSpecimen> = fc.record({
  accession: fc.oneof(fc.stringMatching(/^[A-Z0-9]{1,10}$/), limsText),
  orders: fc.array(
    fc.record({ code: fc.oneof(fc.constantFrom('GLU', 'NA', '10/1'), limsText), stat: fc.boolean() }).map(({ code, stat }) => ({
      orderId: 'o',
      loinc: '1-1',
      priority: stat ? ('stat' as const) : ('routine' as const),
      orderedAt: '2026-07-01T08:00:00Z',
      analyzerCode: code,
    })),
    { minLength: 1, maxLength: 3 },
  ),
  patient: fc.record({
    id: fc.oneof(fc.stringMatching(/^P[0-9]{1,6}$/), limsText),
    name: limsText,
    birthDate: fc.constant('1970-01-02'),
    sex: fc.constantFrom('F' as const, 'M' as const),
  }),
});

describe('ASTM answers against any LIMS text', () => {
  test('the frames parse back to exactly the records meant, no more and no fewer, with no control byte in a frame', () => {
    fc.assert(
      fc.property(
        delimiterSets,
        fc.constantFrom<Charset>('latin1', 'utf8'),
        fc.integer({ min: 12, max: 247 }),
        fc.array(specimen, { minLength: 1, maxLength: 4 }),
        limsText,
        (d, charset, maxFrameBytes, specimens, receiver) => {
          const ctx: OutgoingContext = {
            delimiters: d,
            receiver,
            at: Date.UTC(2026, 6, 1, 10),
            timezone: 'UTC',
            options: options({ charset, codeComponents: [4, 5], codeJoin: '/', orders: { query: true, patient: true } }),
          };
          const { answer } = writableAnswer({ kind: 'orders', specimens, without: [] }, ctx);
          if (answer.kind !== 'orders') return;
          const records = ordersMessage(answer.specimens, 'query', ctx);
          const encoded = encodeRecords(records, d, charset);
          if (encoded.kind !== 'encoded') throw new Error(encoded.reason);
          const frames = framesOf(encoded.text, maxFrameBytes);
          for (const frame of frames) expect([...frame.subarray(2, -5)].filter((b) => b < 0x20 && b !== 0x0d)).toEqual([]);
          const { texts, refused } = received(frames, charset);
          expect(refused).toEqual([]);
          expect(texts).toHaveLength(1);
          const [message, ...more] = parseRecords(texts[0]!);
          expect(more).toEqual([]);
          const got = [
            message!.header!,
            ...texts[0]!
              .split('\r')
              .slice(1, -1)
              .map((line) => ({ fields: line.split(d.field) })),
          ];
          expect(got.map((r) => r.fields[0]![0])).toEqual(records.map((r) => r.type));
          const want = meant(records, d, charset);
          got.forEach((r, i) => {
            const first = records[i]!.type === 'H' ? 2 : 1;
            want[i]!.forEach((f, j) => expect(leaves(r.fields[first + j] ?? '', d)).toEqual(f));
          });
          // The identifiers the answer kept read back exactly as the LIMS sent them.
          const accessions = got.filter((r) => r.fields[0] === 'O').map((r) => unescape(r.fields[2] ?? '', d));
          expect(accessions).toEqual(answer.specimens.map((s) => s.accession));
        },
      ),
      { numRuns: 400 },
    );
  });

  test('a specimen whose identifiers cannot be written exactly is left out, never sent under another name', () => {
    fc.assert(
      fc.property(delimiterSets, fc.constantFrom<Charset>('latin1', 'utf8'), fc.array(specimen, { minLength: 1, maxLength: 4 }), (d, charset, specimens) => {
        const ctx: OutgoingContext = { delimiters: d, receiver: '', at: 0, timezone: 'UTC', options: options({ charset, orders: { patient: true } }) };
        const { answer, leftOut } = writableAnswer({ kind: 'orders', specimens, without: [] }, ctx);
        const kept = answer.kind === 'orders' ? answer.specimens : [];
        expect(kept.length + leftOut).toBe(specimens.length);
        for (const s of kept) expect([s.accession, s.patient!.id].every((id) => writesExactly(id, d, charset))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  test('a Czech name in a Latin-1 answer stays in its P record: č is never CR', () => {
    const ctx: OutgoingContext = {
      delimiters: { field: '|', repeat: '\\', component: '^', escape: '&' },
      receiver: 'cobas',
      at: 0,
      timezone: 'UTC',
      options: options({ orders: { patient: true } }),
    };
    const s: InstrumentSpecimen = {
      accession: 'S1',
      orders: [{ orderId: 'o1', loinc: '2345-7', priority: 'routine', orderedAt: '2026-07-01T08:00:00Z', analyzerCode: 'GLU' }],
      patient: { id: 'P1', name: 'Nováček\u010dO|1|EVIL||^^^GLU\u010dL|1|N', birthDate: '', sex: 'U' },
    };
    const encoded = encodeRecords(ordersMessage([s], 'query', ctx), ctx.delimiters, 'latin1');
    if (encoded.kind !== 'encoded') throw new Error(encoded.reason);
    expect(encoded.text.toString('latin1').split('\r')).toEqual([
      'H|\\^&|||labgate|||||cobas||P|1|19700101000000',
      'P|1|P1|||NovácekcO&F&1&F&EVIL&F&&F&&S&&S&&S&GLUcL&F&1&F&N|||U',
      'O|1|S1||^^^GLU|R|20260701080000|||||N||||||||||||||Q',
      'L|1|N',
      '',
    ]);
    expect(encoded.substituted).toBe(3);
    const decoded = decodeAstmText(encoded.text, profile([]), options({ orders: { query: true } }));
    expect(decoded.rejections).toEqual([]);
  });
});
