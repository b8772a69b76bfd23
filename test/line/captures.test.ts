// The real line capture in ../shared/captures/line (never copied) decoded with the shipped layout and
// compared with its hand reading. Without the corpus the suite is skipped and says why, or fails where the corpus is
// required (CI; see capture-corpus.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { decodeLineCapture } from '../../drivers/line/decode.js';
import { capturesDir, describeCaptures } from '../fixtures/capture-corpus.js';
import { loadLayout } from './layouts.js';

const dir = capturesDir('line');

interface ReadingRow {
  specimen_id: string;
  test_code: string;
  value: string;
  unit: string;
  abnormal_flags: string | null;
  status: string | null;
  resulted_at: string;
}

/** Capture → shipped layout. */
const layouts: Record<string, string> = { 'senaite-astm__spotchem_el.txt': 'arkray-spotchem-el.yaml' };

describeCaptures('line captures', () => {
  test('the captures folder exists and every capture has a layout', () => {
    expect(existsSync(dir), `captures missing at ${dir} (set LABGATE_CAPTURES_DIR)`).toBe(true);
    const files = readdirSync(dir).filter((f) => !f.endsWith('.expected.json'));
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => !(f in layouts))).toEqual([]);
  });

  for (const [name, layout] of Object.entries(layouts)) {
    test(`${name} with ${layout}`, () => {
      const { profile, options } = loadLayout(layout);
      const reading = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), 'utf8')) as { results: ReadingRow[] };
      // A fixed +01:00 keeps the expected instant plain (the source does not say where the analyzer stood).
      const decoded = decodeLineCapture(readFileSync(join(dir, name)), { ...profile, timezone: '+01:00' }, options);
      expect(decoded).toHaveLength(1);
      expect(decoded[0]!.rejections).toEqual([]);
      expect(decoded[0]!.results.map((r) => [r.accession, r.source.analyzerCode, r.valueText, r.unit, r.flags, r.resultedAt])).toEqual(
        reading.results.map((row) => {
          const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(row.resulted_at)!;
          const at = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]! - 1, +m[5]!, +m[6]!)).toISOString().slice(0, 19) + '+00:00';
          // The printout carries no flags and no status (the reading's nulls): labgate reads no flags and the layout's status.
          return [row.specimen_id, row.test_code, row.value, row.unit, row.abnormal_flags ? [row.abnormal_flags] : [], at];
        }),
      );
      expect(decoded[0]!.results.every((r) => r.status === 'final')).toBe(true);
    });
  }
});
