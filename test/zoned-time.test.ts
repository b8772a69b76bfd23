// Reading an analyzer's offset-less local time (ARCHITECTURE.md invariant 3): fold=0 on overlaps, gaps rejected.
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../drivers/astm/decode.js';
import { decodeHl7Capture } from '../drivers/hl7/decode.js';
import { canonicalInstant } from '../src/result.js';
import { isValidZone, wallTimeToInstant, type WallTime } from '../src/zoned-time.js';
import { bytes, frame } from './astm/mnemonics.js';
import { options, profile } from './astm/profile.js';
import { mindrayBs } from './hl7/fixtures.js';

const wall = (s: string): WallTime => {
  const [date = '', time = ''] = s.split(' ');
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute, second] = time.split(':').map(Number) as [number, number, number];
  return { year, month, day, hour, minute, second };
};
const utc = (s: string, zone: string): string => {
  const r = wallTimeToInstant(wall(s), zone);
  if (r.kind !== 'instant') throw new Error(`${s} in ${zone}: ${r.kind}`);
  return canonicalInstant(r.epochMs);
};

describe('wall time to instant', () => {
  it('reads fixed offsets and UTC', () => {
    expect(utc('2026-07-01 16:30:00', '+02:00')).toBe('2026-07-01T14:30:00+00:00');
    expect(utc('2026-07-01 09:30:00', '-0500')).toBe('2026-07-01T14:30:00+00:00');
    expect(utc('2026-07-01 14:30:00', 'UTC')).toBe('2026-07-01T14:30:00+00:00');
  });

  it('follows the zone across the year', () => {
    expect(utc('2026-01-15 12:00:00', 'Europe/Vienna')).toBe('2026-01-15T11:00:00+00:00');
    expect(utc('2026-07-15 12:00:00', 'Europe/Vienna')).toBe('2026-07-15T10:00:00+00:00');
    expect(utc('2026-07-15 12:00:00', 'America/New_York')).toBe('2026-07-15T16:00:00+00:00');
  });

  it('reads a local time that occurs twice as the earlier instant (fold=0, Temporal compatible)', () => {
    // Europe/Vienna 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens at 00:30Z and at 01:30Z.
    expect(utc('2026-10-25 02:30:00', 'Europe/Vienna')).toBe('2026-10-25T00:30:00+00:00');
    // America/New_York 2026-11-01: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST).
    expect(utc('2026-11-01 01:30:00', 'America/New_York')).toBe('2026-11-01T05:30:00+00:00');
  });

  it('rejects a local time in the spring gap, suggesting a fixed offset', () => {
    const r = wallTimeToInstant(wall('2026-03-29 02:30:00'), 'Europe/Vienna');
    expect(r.kind).toBe('nonexistent');
    expect(r.kind === 'nonexistent' && r.reason).toMatch(/fixed offset/);
    // The same reading from a clock configured with a fixed offset is fine.
    expect(utc('2026-03-29 02:30:00', '+01:00')).toBe('2026-03-29T01:30:00+00:00');
  });

  it('rejects impossible dates and unknown zones instead of inventing an instant', () => {
    expect(wallTimeToInstant(wall('2026-02-30 10:00:00'), 'UTC').kind).toBe('invalid');
    expect(wallTimeToInstant(wall('2026-07-01 24:00:00'), 'UTC').kind).toBe('invalid');
    expect(wallTimeToInstant(wall('2026-07-01 10:00:00'), 'Mars/Olympus').kind).toBe('invalid');
    expect(isValidZone('Europe/Vienna')).toBe(true);
    expect(isValidZone('+01:00')).toBe(true);
    expect(isValidZone('Mars/Olympus')).toBe(false);
  });
});

describe('UTC offsets (ISO 8601, HL7 DTM): at most ±14:00, minutes below 60', () => {
  it('reads the extremes', () => {
    expect(utc('2026-07-01 14:30:00', '+14:00')).toBe('2026-07-01T00:30:00+00:00');
    expect(utc('2026-07-01 00:30:00', '-1400')).toBe('2026-07-01T14:30:00+00:00');
    expect(utc('2026-07-01 14:30:00', '+0545')).toBe('2026-07-01T08:45:00+00:00');
  });

  it.each(['+9999', '-0075', '+1401', '+1500', '-14:01', '+0560'])('%s is no offset: the time is rejected with its reason', (offset) => {
    const r = wallTimeToInstant(wall('2026-07-01 10:00:00'), offset);
    expect(r).toEqual({ kind: 'invalid', reason: `UTC offset ${offset} out of range (at most ±14:00, minutes below 60)` });
    expect(isValidZone(offset)).toBe(false);
  });

  it('ASTM: a result time with an impossible offset rejects the result instead of shifting it', () => {
    const p = profile([{ code: 'GLU', loinc: '2345-7' }]);
    const wire = (time: string): Buffer => bytes('<ENQ>' + frame(1, `H|\\^&<CR>O|1|A1<CR>R|1|^^^GLU|5|||||F||||${time}<CR>L|1<CR>`) + '<EOT>');
    const [ok] = decodeAstmCapture(wire('20260701100000+0200'), p, options());
    expect(ok!.results[0]!.resultedAt).toBe('2026-07-01T08:00:00+00:00');
    const [bad] = decodeAstmCapture(wire('20260701100000-0075'), p, options());
    expect(bad!.results).toEqual([]);
    expect(bad!.rejections[0]!.reason).toBe('R.13: UTC offset -0075 out of range (at most ±14:00, minutes below 60)');
  });

  it('HL7: OBX-14 with +9999 rejects the result instead of moving it by four days', () => {
    const payload = mindrayBs.payload.replace('|20241029082955|', '|20241029082955+9999|');
    const [m] = decodeHl7Capture(Buffer.from(payload, 'latin1'), mindrayBs.profile, { ...mindrayBs.options, framing: 'none' });
    expect(m!.results.map((r) => r.analyteLoinc)).not.toContain('2345-7');
    expect(m!.rejections.map((r) => r.reason).join(' ')).toMatch(/UTC offset \+99:99 out of range/);
  });
});
