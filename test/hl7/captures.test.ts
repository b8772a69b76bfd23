// The real HL7 captures in ../shared/captures/hl7 (never copied into the project) decoded with a profile
// for each analyzer and compared with their hand readings. Without the corpus the suite is skipped and says why,
// or fails where the corpus is required (CI; see capture-corpus.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { decodeHl7Capture } from '../../drivers/hl7/decode.js';
import type { Hl7OptionsInput } from '../../drivers/hl7/options.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { capturesDir, describeCaptures } from '../fixtures/capture-corpus.js';

const dir = capturesDir('hl7');

interface ReadingRow {
  value_type: string;
  specimen_id: string;
  test_code: string;
  value: string;
  unit: string;
  ref_range: string;
  /** A string, or the repetitions (empty ones included) where the reading split them. */
  abnormal_flags: string | string[];
  status: string;
  resulted_at: string;
}

interface Analyzer {
  timezone: string;
  options: Hl7OptionsInput;
  /** Rows of the reading that are not patient results for this analyzer, and why. */
  skipped: (row: ReadingRow) => string | undefined;
  status: (row: ReadingRow) => string;
}

// The offset is arbitrary (the sources do not say where the analyzers stood); a fixed one keeps the expected instants plain.
const timezone = '-03:00';

const analyzers: Record<string, Analyzer> = {
  'plramoss-node_server__dymind.cr.hl7': {
    timezone,
    // IS rows are modes and flag rows (Take Mode, Leucopenia = T), ED rows are PNG histograms; the
    // Age row is a demographic and the histogram discriminator lines are not results either.
    options: { framing: 'none', skipValueTypes: ['ED', 'IS'], skipCodes: ['30525-0', '12001', '12002', '12004', '12051', '12052', '12101', '12102'] },
    skipped: (row) =>
      row.value_type === 'IS' || row.value_type === 'ED'
        ? `${row.value_type} row`
        : ['30525-0', '12001', '12002', '12004', '12051', '12052', '12101', '12102'].includes(row.test_code)
          ? 'not a result'
          : undefined,
    status: () => 'final',
  },
  'plramoss-node_server__pointcare.cr.hl7': {
    timezone,
    // OBX-3 is empty and the code is in OBX-4; OBX-11 is never sent; OBX-18/19 hold the measuring range, not equipment.
    options: { framing: 'none', code: ['OBX-3', 'OBX-4'], missingStatus: 'final', equipment: null },
    skipped: () => undefined,
    // The reading leaves the status raw (''); labgate reads it per the profile's missingStatus.
    status: () => 'final',
  },
};

function profileFor(name: string, rows: ReadingRow[], analyzer: Analyzer): InstrumentProfile {
  const codes = [...new Set(rows.map((r) => r.test_code))];
  const mapping = codes.map((code) => ({ code, loinc: `X-${code}`, unit: rows.find((r) => r.test_code === code)!.unit || null }));
  return { id: name.split('__')[1]!.split('.')[0]!, gatewayId: 'gw-captures', timezone: analyzer.timezone, mapping };
}

function expectedInstant(local: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(local)!;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]! + 3, +m[5]!, +m[6]!);
  return new Date(ms).toISOString().slice(0, 19) + '+00:00';
}

describeCaptures('HL7 captures', () => {
  test('the captures folder exists and every capture has an analyzer profile', () => {
    expect(existsSync(dir), `captures missing at ${dir} (set LABGATE_CAPTURES_DIR)`).toBe(true);
    const files = readdirSync(dir).filter((f) => !f.endsWith('.expected.json'));
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => !(f in analyzers))).toEqual([]);
  });

  for (const [name, analyzer] of Object.entries(analyzers)) {
    test(name, () => {
      const raw = readFileSync(join(dir, name));
      const reading = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), 'utf8')) as { message_count: number; results: ReadingRow[] };
      const kept = reading.results.filter((r) => analyzer.skipped(r) === undefined);
      const decoded = decodeHl7Capture(raw, profileFor(name, kept, analyzer), analyzer.options);
      expect(decoded).toHaveLength(reading.message_count);
      const results = decoded.flatMap((m) => m.results);
      expect(decoded.flatMap((m) => m.rejections)).toEqual([]);
      expect(
        results.map((r) => [r.accession, r.source.analyzerCode, r.valueText, r.unit ?? '', r.referenceRange ?? '', r.flags, r.status, r.resultedAt]),
      ).toEqual(
        kept.map((row) => [
          row.specimen_id,
          row.test_code,
          row.value,
          row.unit,
          row.ref_range,
          (Array.isArray(row.abnormal_flags) ? row.abnormal_flags : row.abnormal_flags.split('~')).filter((f) => f !== ''),
          analyzer.status(row),
          expectedInstant(row.resulted_at),
        ]),
      );
    });
  }

  test('pointcare: numbers sent as ST get a numeric value; the unreadable ALB value stays text without one', () => {
    const name = 'plramoss-node_server__pointcare.cr.hl7';
    const reading = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), 'utf8')) as { results: ReadingRow[] };
    const results = decodeHl7Capture(readFileSync(join(dir, name)), profileFor(name, reading.results, analyzers[name]!), analyzers[name]!.options)[0]!.results;
    expect(results.find((r) => r.source.analyzerCode === 'TP')).toMatchObject({ value: 4.72, comparator: null });
    expect(results.find((r) => r.source.analyzerCode === 'ALB')).toMatchObject({ valueText: '\ufffd\ufffd1', value: null });
    expect(results.find((r) => r.source.analyzerCode === 'A/G')).toMatchObject({ valueText: '0.3/1', value: null, unit: null });
  });

  test('dymind: masked values (***.*) keep their text, carry no number, and keep their flags', () => {
    const name = 'plramoss-node_server__dymind.cr.hl7';
    const reading = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), 'utf8')) as { results: ReadingRow[] };
    const kept = reading.results.filter((r) => analyzers[name]!.skipped(r) === undefined);
    const results = decodeHl7Capture(readFileSync(join(dir, name)), profileFor(name, kept, analyzers[name]!), analyzers[name]!.options)[0]!.results;
    expect(results.find((r) => r.source.analyzerCode === '787-2')).toMatchObject({ valueText: '***.*', value: null, flags: ['A'] });
  });
});
