// The shared real-analyzer captures, decoded as the gateway would and compared with their hand readings.
// Without the corpus the suite is skipped and says why, or fails where the corpus is required (capture-corpus.ts).
//
// Where labgate disagrees with a reading, the test says so and why:
//  1. Result time when R.13 is empty but R.12 is set (DCA Vantage, Yumizen H500): the readings take H.14
//     (their rule is "R.13, else H.14"); labgate takes R.12 (issue 3: R.13 → R.12 → H.14). R.12 is the
//     analyzer's time of the measurement itself; H.14 is when the message was composed, which changes each
//     time the analyzer resends the result, so a key built on H.14 would turn a resend into a second result
//     (invariants 3 and 4). The readings' rule is reproduced by `resultTime: [R.13, H.14]`, tested below.
//  2. `instrument`: the readings give H.5 (the sender name); labgate's instrumentId is the configured id.
//  3. Values: the readings keep Sysmex XP-100's space padding ("  5.5"); labgate trims (valueText "5.5").
//  4. Reference range: the readings give R.6 whole ("84.0 - 94.0^REFERENCE_RANGE"); labgate keeps component 1,
//     the range (LIS2-A2 R.6: range ^ description).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../../drivers/astm/decode.js';
import type { AstmOptionsInput } from '../../drivers/astm/options.js';
import type { Rejection } from '../../src/message.js';
import { capturesDir, describeCaptures } from '../fixtures/capture-corpus.js';
import type { KeyedResult } from '../../src/result.js';
import { canonicalInstant } from '../../src/result.js';
import { options, profile } from './profile.js';
import type { CaptureProfile } from './profiles/captures.js';
import { captureProfiles } from './profiles/captures.js';

const astmDir = capturesDir('astm');

interface ReadingResult {
  specimen_id: string;
  test_code: string;
  value: string;
  unit: string;
  ref_range: string;
  abnormal_flags: string;
  status: string;
  resulted_at: string | null;
  resulted_at_field: string;
  'R.12_date_time_test_started'?: string;
}
interface Reading {
  sha256: string;
  result_count: number;
  framing: { all_checksums_ok: boolean };
  notes: string[];
  results: ReadingResult[];
}

const wallUtc = (t: string): string =>
  canonicalInstant(Date.UTC(+t.slice(0, 4), +t.slice(4, 6) - 1, +t.slice(6, 8), +t.slice(8, 10), +t.slice(10, 12), +t.slice(12, 14)));

function decode(cp: CaptureProfile, over: AstmOptionsInput = {}): { results: KeyedResult[]; rejections: Rejection[] } {
  const raw = readFileSync(join(astmDir, cp.file));
  const decoded = decodeAstmCapture(
    raw,
    profile(cp.mapping, { id: cp.file.replace(/\.txt$/, ''), timezone: cp.timezone }),
    options({ ...cp.options, ...over }),
  );
  return { results: decoded.flatMap((m) => m.results), rejections: decoded.flatMap((m) => m.rejections) };
}

/** labgate's time for a reading: R.12 where the reading fell back to H.14 past a set R.12 (disagreement 1). */
function labgateTime(r: ReadingResult): string | null {
  if (r.resulted_at_field.startsWith('H.14') && r['R.12_date_time_test_started']) return wallUtc(r['R.12_date_time_test_started']);
  return r.resulted_at === null ? null : wallUtc(r.resulted_at);
}

function compare(ours: KeyedResult, r: ReadingResult, time: string | null): void {
  expect(ours.accession).toBe(r.specimen_id);
  expect(ours.valueText).toBe(r.value.trim());
  expect(ours.unit).toBe(r.unit || null);
  expect(ours.referenceRange).toBe(r.ref_range.split('^')[0]!.trim() || null);
  expect(ours.flags).toEqual(r.abnormal_flags ? r.abnormal_flags.split('\\') : []);
  // The XP-100 sends no R.9; labgate's default for an empty status is final (emptyStatus option).
  expect(ours.status).toBe({ F: 'final', '': 'final' }[r.status]);
  expect(ours.resultedAt).toBe(time);
}

describeCaptures('real analyzer captures (astm)', () => {
  it('the corpus has its ASTM folder', () => {
    expect(existsSync(astmDir), `captures folder missing: ${astmDir}`).toBe(true);
  });

  it('every ASTM capture has a profile here', () => {
    const files = readdirSync(astmDir).filter((f) => !f.endsWith('.json') && !f.endsWith('.md'));
    expect(files.sort()).toEqual(captureProfiles.map((c) => c.file).sort());
  });

  describe.each(captureProfiles)('$file', (cp) => {
    const reading = (): Reading => JSON.parse(readFileSync(join(astmDir, `${cp.file}.expected.json`), 'utf8')) as Reading;

    it('is the capture the reading describes', () => {
      expect(
        createHash('sha256')
          .update(readFileSync(join(astmDir, cp.file)))
          .digest('hex'),
      ).toBe(reading().sha256);
    });

    it('decodes to the results of the reading (with the documented disagreements)', () => {
      const rd = reading();
      const { results, rejections } = decode(cp);
      expect(rd.framing.all_checksums_ok).toBe(true);
      expect(rejections.filter((r) => !r.analyzerCode)).toEqual([]);
      expect(results.length + rejections.length).toBe(rd.result_count);
      for (const r of rd.results) {
        const time = labgateTime(r);
        if (time === null) {
          // Agreement: no instrument time at all → rejected, never given an invented time (invariant 3).
          expect(rejections.find((x) => x.analyzerCode === r.test_code)?.reason).toMatch(/^no result time/);
          continue;
        }
        const ours = results.find((x) => x.source.analyzerCode === r.test_code && x.accession === r.specimen_id);
        expect(ours, `${r.test_code} missing`).toBeDefined();
        compare(ours!, r, time);
      }
    });

    it("reproduces the reading's own time rule exactly with resultTime [R.13, H.14]", () => {
      const rd = reading();
      const { results } = decode(cp, { resultTime: ['R.13', 'H.14'] });
      for (const r of rd.results.filter((x) => x.resulted_at !== null)) {
        expect(results.find((x) => x.source.analyzerCode === r.test_code)?.resultedAt).toBe(wallUtc(r.resulted_at!));
      }
    });
  });

  it('Yumizen H500: a QC run (H.12 = Q) gives QC results, kept apart from patient results', () => {
    const { results } = decode(captureProfiles.find((c) => c.file.includes('yumizen'))!);
    expect(results).toHaveLength(21);
    expect(results.every((r) => r.qc)).toBe(true);
  });

  it('Sysmex XN-550: the &R& escapes of the image rows decode to backslashes; flag rows carry no value', () => {
    const { results } = decode(captureProfiles.find((c) => c.file.includes('xn550'))!);
    expect(results.find((r) => r.source.analyzerCode === 'DIST_PLT')?.valueText).toBe('PNG\\20240628\\2024_06_27_13_54_27_PLT.PNG');
    expect(results.find((r) => r.source.analyzerCode === 'Anemia')).toMatchObject({ valueText: '', value: null, flags: ['A'] });
  });

  it('Roche c311: no R.13/R.12/H.14, so rejected by default; O.23 can be named to read the time from', () => {
    const cp = captureProfiles.find((c) => c.file.includes('c311'))!;
    expect(decode(cp).results).toEqual([]);
    const { results } = decode(cp, { resultTime: ['R.13', 'R.12', 'H.14', 'O.23'] });
    expect(results.map((r) => r.resultedAt)).toEqual(Array(7).fill('2024-02-03T13:20:11+00:00'));
  });

  it('the standard defaults refuse the deviations these analyzers need (so each is an explicit opt-in)', () => {
    for (const cp of captureProfiles) {
      const strict = decode({ ...cp, options: { ...cp.options, deviations: undefined, maxFrameBytes: 247 } });
      expect(strict.results, cp.file).toEqual([]);
      expect(strict.rejections[0]?.reason, cp.file).toMatch(
        /^(incomplete message at the end of the capture|message discarded: 7 frames refused in a row) \((frame refused|a frame is cut short)/,
      );
    }
  });
});
