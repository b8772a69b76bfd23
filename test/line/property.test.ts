import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeLineCapture } from '../../drivers/line/decode.js';
import { createLineRunner } from '../../drivers/line/runner.js';
import type { DecodedMessage } from '../../src/message.js';
import { makeContext } from '../hl7/context.js';
import { bytes } from '../hl7/mnemonic.js';
import { clinitekReport, loadLayout, spotchemReport } from './layouts.js';

const spotchem = loadLayout('arkray-spotchem-el.yaml');
const clinitek = loadLayout('siemens-clinitek-status.yaml');
const spotchemStream = bytes(`noise<LF>${spotchemReport}${spotchemReport.replace('24K0231', '24K0299')}`);
const clinitekStream = bytes(clinitekReport + clinitekReport.replace('U24-0311', 'U24-0312'));

/** What the runner commits for a stream delivered in the given chunks (idle gap after the last one). */
function viaRunner(layout: typeof spotchem, chunks: Buffer[]): DecodedMessage[] {
  const h = makeContext(layout.profile);
  const runner = createLineRunner(h.ctx, layout.options);
  runner.start();
  for (const c of chunks) h.transport.emitData(c);
  h.clock.advance(60_000);
  return h.ingest.messages.map((m) => ({ results: m.results, rejections: m.rejections }));
}

// maxLineBytes at its floor (80): a SPOTCHEM report line is longer, so every report of this stream is dropped whole.
const spotchemShortLines = { ...spotchem, options: { ...spotchem.options, maxLineBytes: 80 } };
const clinitekWithLongLine = bytes(clinitekReport.replace('Operator: JS', `Operator: ${'J'.repeat(90)}`) + clinitekReport.replace('U24-0311', 'U24-0312'));
const clinitekShortLines = { ...clinitek, options: { ...clinitek.options, maxLineBytes: 80 } };

describe('the runner and decodeLineCapture agree at every chunking', () => {
  test.each([
    ['SPOTCHEM', spotchem, spotchemStream, 2],
    ['CLINITEK', clinitek, clinitekStream, 2],
    ['SPOTCHEM, lines over maxLineBytes', spotchemShortLines, spotchemStream, 0],
    ['CLINITEK, one line over maxLineBytes', clinitekShortLines, clinitekWithLongLine, 2],
  ])('%s: every byte boundary', (_name, layout, stream, reports) => {
    const want = decodeLineCapture(stream, layout.profile, layout.options);
    expect(want).toHaveLength(reports);
    for (let i = 0; i <= stream.length; i += 1) {
      expect(viaRunner(layout, [stream.subarray(0, i), stream.subarray(i)])).toEqual(want);
    }
  });
});

describe('corruption', () => {
  test('never crashes and never yields a result whose parts were not sent', () => {
    fc.assert(
      fc.property(
        fc.constantFrom([spotchem, spotchemStream] as const, [clinitek, clinitekStream] as const),
        fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), insert: fc.boolean() }), { minLength: 1, maxLength: 6 }),
        ([layout, stream], edits) => {
          const data = [...stream];
          for (const e of edits) {
            if (e.insert) data.splice(e.at % (data.length + 1), 0, e.byte);
            else data[e.at % data.length] = e.byte;
          }
          const corrupted = Buffer.from(data);
          const text = corrupted.toString('latin1');
          for (const r of decodeLineCapture(corrupted, layout.profile, layout.options).flatMap((m) => m.results)) {
            expect(text).toContain(r.accession);
            expect(text).toContain(r.source.analyzerCode);
            expect(text).toContain(r.valueText);
            expect(layout.profile.mapping.map((m) => m.code)).toContain(r.source.analyzerCode);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
