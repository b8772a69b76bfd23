// Reading an analyzer's offset-less local time in its configured clock zone (ARCHITECTURE.md invariant 3).
// A wall time that occurs twice (autumn overlap) is the earlier instant, as Python's zoneinfo with fold=0
// and Temporal's 'compatible' disambiguation do; one that never occurs (spring gap) is rejected.

/** A wall-clock reading as an analyzer prints it. Month is 1-12. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond?: number;
}

export type ZonedInstant = { kind: 'instant'; epochMs: number } | { kind: 'nonexistent'; reason: string } | { kind: 'invalid'; reason: string };

const fixedOffsetPattern = /^(?:UTC|GMT)?([+-])(\d{2}):?(\d{2})$/;
/** ISO 8601 and HL7 DTM: a UTC offset is at most ±14:00, its minutes below 60. */
const MAX_OFFSET_MINUTES = 14 * 60;
const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** A clock zone: `UTC`, a fixed offset (`+01:00`, `-0500`, within ±14:00) or an IANA name (`Europe/Vienna`). */
export function isValidZone(zone: string): boolean {
  const fixed = fixedOffsetMinutes(zone);
  if (fixed !== undefined) return fixed !== null;
  try {
    formatterFor(zone);
    return true;
  } catch {
    return false;
  }
}

/** The instant a wall time denotes in `zone`, or why it denotes none. */
export function wallTimeToInstant(wall: WallTime, zone: string): ZonedInstant {
  const invalid = checkWallTime(wall);
  if (invalid) return { kind: 'invalid', reason: invalid };
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second, wall.millisecond ?? 0);
  const fixed = fixedOffsetMinutes(zone);
  // A wrong offset is a wrong instant, and so a wrong dedup key: an impossible one is rejected, never applied.
  if (fixed === null) return { kind: 'invalid', reason: `UTC offset ${zone} out of range (at most ±14:00, minutes below 60)` };
  if (fixed !== undefined) return { kind: 'instant', epochMs: asUtc - fixed * 60_000 };
  if (!isValidZone(zone)) return { kind: 'invalid', reason: `unknown time zone ${zone}` };
  // Offsets a day either side bracket any transition; each candidate is real only if its own offset agrees.
  const candidates = new Set<number>();
  for (const probe of [asUtc - DAY_MS, asUtc + DAY_MS]) {
    const candidate = asUtc - offsetMs(probe, zone);
    if (offsetMs(candidate, zone) === asUtc - candidate) candidates.add(candidate);
  }
  if (candidates.size === 0) {
    return {
      kind: 'nonexistent',
      reason: `local time ${formatWall(wall)} does not exist in ${zone} (daylight-saving gap); if the analyzer clock ignores daylight saving, configure a fixed offset such as +01:00`,
    };
  }
  return { kind: 'instant', epochMs: Math.min(...candidates) };
}

/** Offset of `zone` from UTC at `epochMs`, in milliseconds. */
export function offsetMs(epochMs: number, zone: string): number {
  const fixed = fixedOffsetMinutes(zone);
  if (fixed !== undefined && fixed !== null) return fixed * 60_000;
  const parts = formatterFor(zone).formatToParts(new Date(epochMs));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  const hour = get('hour') % 24;
  const local = Date.UTC(get('year'), get('month') - 1, get('day'), hour, get('minute'), get('second'));
  return local - (epochMs - (((epochMs % 1000) + 1000) % 1000));
}

/** Minutes east of UTC for a fixed offset; null for one out of range; undefined when `zone` is no fixed offset. */
function fixedOffsetMinutes(zone: string): number | null | undefined {
  if (zone === 'UTC' || zone === 'Z' || zone === 'GMT') return 0;
  const m = fixedOffsetPattern.exec(zone);
  if (!m) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  if (Number(m[3]) >= 60 || minutes > MAX_OFFSET_MINUTES) return null;
  return m[1] === '-' ? -minutes : minutes;
}

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

function checkWallTime(w: WallTime): string | undefined {
  const inRange = (v: number, lo: number, hi: number): boolean => Number.isInteger(v) && v >= lo && v <= hi;
  if (!inRange(w.year, 1900, 9999)) return `year ${w.year} out of range`;
  if (!inRange(w.month, 1, 12)) return `month ${w.month} out of range`;
  const daysInMonth = new Date(Date.UTC(w.year, w.month, 0)).getUTCDate();
  if (!inRange(w.day, 1, daysInMonth)) return `day ${w.day} out of range`;
  if (!inRange(w.hour, 0, 23)) return `hour ${w.hour} out of range`;
  if (!inRange(w.minute, 0, 59)) return `minute ${w.minute} out of range`;
  if (!inRange(w.second, 0, 59)) return `second ${w.second} out of range`;
  return undefined;
}

function formatWall(w: WallTime): string {
  const p = (n: number, l = 2): string => String(n).padStart(l, '0');
  return `${p(w.year, 4)}-${p(w.month)}-${p(w.day)} ${p(w.hour)}:${p(w.minute)}:${p(w.second)}`;
}
