// Fuzzing the line decoder (printed reports read with the layout's patterns): it never throws, never yields a
// result whose parts were not printed, never holds a report beyond maxReportLines, and takes time linear in the
// printout.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assembleCapture, decodeLineCapture } from '../../drivers/line/decode.js';
import { bytes } from '../hl7/mnemonic.js';
import { clinitekReport, loadLayout, spotchemReport } from '../line/layouts.js';
import { mutate } from './astm-wire.js';
import { expectLinear, runs } from './linear.js';

const spotchem = loadLayout('arkray-spotchem-el.yaml');
const clinitek = loadLayout('siemens-clinitek-status.yaml');
const layouts = [
  { layout: spotchem, report: bytes(spotchemReport) },
  { layout: clinitek, report: bytes(clinitekReport) },
];
const edit = fc.record({ how: fc.constantFrom('replace', 'insert', 'delete'), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) });

describe('line decoder under fuzzing', () => {
  it('never throws and never yields a result whose parts were not printed', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...layouts),
        fc.array(fc.oneof(fc.constant('report'), fc.uint8Array({ maxLength: 200 })), { minLength: 1, maxLength: 4 }),
        fc.array(edit, { maxLength: 5 }),
        ({ layout, report }, parts, edits) => {
          const wire = mutate(Buffer.concat(parts.map((p) => (p === 'report' ? report : Buffer.from(p)))), edits);
          const text = wire.toString('latin1');
          for (const r of decodeLineCapture(wire, layout.profile, layout.options).flatMap((m) => m.results)) {
            expect(text).toContain(r.accession);
            expect(text).toContain(r.source.analyzerCode);
            expect(text).toContain(r.valueText);
          }
        },
      ),
      { numRuns: runs(400) },
    );
  });

  it('a report never holds more than maxReportLines lines', () => {
    const options = { ...clinitek.options, maxReportLines: 50 };
    const endless = Buffer.concat([bytes(clinitekReport), Buffer.from('GLU          Negative\r\n'.repeat(1_000))]);
    const reports = assembleCapture(endless, options);
    expect(reports).toHaveLength(1);
    expect(reports[0]!.raw.toString('latin1').split('\n').length - 1).toBe(50);
  });
});

describe('line decoder: time linear in the printout', () => {
  it('many reports', () => {
    for (const { layout, report } of layouts) {
      expectLinear(
        'reports',
        (scale) => Buffer.concat(Array.from({ length: 5 * scale }, () => report)),
        (wire) => decodeLineCapture(wire, layout.profile, layout.options),
      );
    }
  });

  it('long lines and many rows (no long run of digits: the number reader is measured on its own)', () => {
    const options = { ...clinitek.options, maxReportLines: 100_000 };
    const rows = (n: number): Buffer => Buffer.concat([bytes(clinitekReport), Buffer.from('BIL          Negative\r\n'.repeat(n))]);
    expectLinear(
      'rows',
      (scale) => rows(20 * scale),
      (wire) => decodeLineCapture(wire, clinitek.profile, options),
    );
    const long = (n: number): Buffer => Buffer.concat([bytes(clinitekReport), Buffer.from(`Color: ${'Yellow '.repeat(n)}\r\n`)]);
    expectLinear(
      'a long line',
      (scale) => long(40 * scale),
      (wire) => decodeLineCapture(wire, clinitek.profile, clinitek.options),
    );
  });
});
