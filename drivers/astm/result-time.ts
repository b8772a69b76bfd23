// The instrument time of a result (ARCHITECTURE.md invariant 3): read from the configured fields in order,
// in the analyzer's clock zone. No usable time is a rejection: an invented time would break the key.
import { canonicalInstant } from '../../src/result.js';
import { wallTimeToInstant } from '../../src/zoned-time.js';
import { astmGrammar, formatFieldLocation, type FieldLocation } from '../../src/field-location.js';
import type { AstmRecord, ResultEntry } from './records.js';
import { textAt } from './records.js';

export type ResultTime = { kind: 'time'; resultedAt: string; field: string } | { kind: 'rejected'; reason: string };

/** LIS2-A2 6.6.2: YYYYMMDDHHMMSS (seconds may be absent); a trailing ±HHMM offset is honoured if sent. */
const dateTimePattern = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?([+-]\d{4})?$/;

/**
 * The first non-empty configured field decides; an unreadable or nonexistent time rejects the result.
 * `memo` (one per message) saves converting the same wall time in the same zone for every result.
 */
export function resultTime(entry: ResultEntry, fields: readonly FieldLocation[], zone: string, memo?: Map<string, ResultTime>): ResultTime {
  for (const at of fields) {
    const rec = recordFor(entry, at);
    const raw = rec ? textAt(rec, at).trim() : '';
    const ref = formatFieldLocation(at, astmGrammar);
    if (!raw) continue;
    const key = `${ref}\u0000${raw}`;
    const known = memo?.get(key);
    if (known) return known;
    const time = readTime(raw, ref, zone);
    memo?.set(key, time);
    return time;
  }
  return { kind: 'rejected', reason: `no result time: ${fields.map((f) => formatFieldLocation(f, astmGrammar)).join(', ')} empty or absent` };
}

function readTime(raw: string, ref: string, zone: string): ResultTime {
  const m = dateTimePattern.exec(raw);
  if (!m) return { kind: 'rejected', reason: `${ref} '${raw}' is not a date/time of the form YYYYMMDDHHMMSS` };
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((v) => Number(v ?? 0)) as number[];
  const wall = { year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second: second! };
  const at = wallTimeToInstant(wall, m[7] ?? zone);
  if (at.kind === 'instant') return { kind: 'time', resultedAt: canonicalInstant(at.epochMs), field: ref };
  return { kind: 'rejected', reason: `${ref}: ${at.reason}` };
}

/** The record a field location points into, for one result. */
export function recordFor(entry: ResultEntry, at: Pick<FieldLocation, 'segment'>): AstmRecord | null {
  switch (at.segment) {
    case 'H':
      return entry.header;
    case 'P':
      return entry.patient;
    case 'O':
      return entry.order;
    case 'R':
      return entry.result;
    default:
      return null;
  }
}
