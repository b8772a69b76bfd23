// HL7 time stamps (HL7 v2.5.1 Chapter 2A, DTM and TS data types):
// YYYY[MM[DD[HH[MM[SS[.S[S[S[S]]]]]]]]][+/-ZZZZ]. An offset in the value is honored; an offset-less
// value is the analyzer's wall clock, read in its configured zone (ARCHITECTURE.md invariant 3).
import { wallTimeToInstant } from '../../src/zoned-time.js';

export type Hl7Instant = { kind: 'instant'; epochMs: number } | { kind: 'absent' } | { kind: 'rejected'; reason: string };

const pattern = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})?(\d{2})?(?:\.(\d{1,4}))?([+-]\d{4})?$/;

/** Reads TS component 1 (or a DTM). Minute precision at least: a coarser time cannot identify a result. */
export function readHl7Time(value: string, zone: string): Hl7Instant {
  const text = value.trim();
  if (text === '') return { kind: 'absent' };
  const m = pattern.exec(text);
  if (!m) {
    const coarse = /^\d{4,8}(?:[+-]\d{4})?$/.test(text);
    return { kind: 'rejected', reason: coarse ? `time '${text}' has no time of day` : `time '${text}' is not an HL7 DTM` };
  }
  if (m[5] === undefined) return { kind: 'rejected', reason: `time '${text}' is not precise to the minute` };
  const wall = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: m[6] === undefined ? 0 : Number(m[6]),
    millisecond: m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000),
  };
  const offset = m[8];
  const zoneOf = offset === undefined ? zone : `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const instant = wallTimeToInstant(wall, zoneOf);
  if (instant.kind === 'instant') return instant;
  return { kind: 'rejected', reason: `time '${text}': ${instant.reason}` };
}
