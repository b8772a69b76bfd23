// A finished report to keyed results: accession and time from the report's fields, one result per row.
// Invariant 3: the time is the printout's own, read in the analyzer's zone; a report without one is rejected.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { lookupAnalyte } from '../../src/config/mapping.js';
import type { DecodedMessage, Rejection } from '../../src/message.js';
import { canonicalInstant, keyedResultSchema, type KeyedResult } from '../../src/result.js';
import { valueFields } from '../../src/result-value.js';
import { wallTimeToInstant } from '../../src/zoned-time.js';
import type { LineResult, Report } from './assembler.js';
import type { LineOptions } from './options.js';

const monthNames = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Normalizes one report; every row becomes a result or a rejection with its reason. */
export function normalizeReport(report: Report, profile: InstrumentProfile, options: LineOptions): DecodedMessage {
  const out: DecodedMessage = { results: [], rejections: [] };
  const accession = report.fields.accession ?? '';
  const time = reportTime(report.fields, profile.timezone);
  if (report.results.length === 0) out.rejections.push({ reason: 'report holds no result rows', ...(accession ? { accession } : {}) });
  if (report.problems.length > 0) {
    // A damaged line may be the one that carried the accession, the time or a value: nothing of the report is loaded.
    const reason = `report arrived damaged (${report.problems.join('; ')})`;
    for (const row of report.results) out.rejections.push({ reason, analyzerCode: row.code, ...(accession ? { accession } : {}), observed: observed(row) });
    return out;
  }
  for (const row of report.results) {
    const one = normalizeRow(row, accession, time, profile, options);
    if ('reason' in one) out.rejections.push(one);
    else out.results.push(one);
  }
  return out;
}

function normalizeRow(row: LineResult, accession: string, time: TimeReading, profile: InstrumentProfile, options: LineOptions): KeyedResult | Rejection {
  const reject = (reason: string): Rejection => ({ reason, analyzerCode: row.code, ...(accession ? { accession } : {}), observed: observed(row) });
  if (accession === '') return reject('report has no accession (no `accession` group matched)');
  if (time.kind === 'none') return reject(time.reason);
  const unit = row.unit && row.unit !== '' ? row.unit : null;
  const mapped = lookupAnalyte(profile.mapping, row.code, unit);
  if (mapped.kind === 'rejected') return reject(mapped.reason);
  const parsed = keyedResultSchema.safeParse({
    accession,
    analyteLoinc: mapped.loinc,
    instrumentId: profile.id,
    resultedAt: canonicalInstant(time.epochMs),
    valueText: row.value,
    ...valueFields(row.value),
    unit: mapped.unit ?? null,
    status: options.status,
    // A printout carries no status letter: the status is the layout's.
    statusCode: null,
    flags: (row.flags ?? '').split(/[\s,;]+/).filter((f) => f !== ''),
    referenceRange: null,
    qc: mapped.qc,
    source: { gatewayId: profile.gatewayId, driver: 'line', analyzerCode: row.code, captureId: null },
  });
  if (!parsed.success) return reject(`result is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
  return parsed.data;
}

// What the printout said beside a rejected code, for the codes the status page lists.
function observed(row: LineResult): { value: string; unit: string | null } {
  return { value: row.value, unit: row.unit && row.unit !== '' ? row.unit : null };
}

type TimeReading = { kind: 'instant'; epochMs: number } | { kind: 'none'; reason: string };

function reportTime(f: Record<string, string>, zone: string): TimeReading {
  if (f.year === undefined || f.month === undefined || f.day === undefined || f.hour === undefined || f.minute === undefined) {
    return { kind: 'none', reason: 'report has no complete time (year, month, day, hour and minute groups)' };
  }
  const yy = Number(f.year);
  // Two-digit years are this century's: printouts from before 2000 are not arriving any more.
  const year = f.year.length <= 2 ? 2000 + yy : yy;
  const month = /^\d+$/.test(f.month) ? Number(f.month) : monthNames.indexOf(f.month.slice(0, 3).toLowerCase()) + 1;
  let hour = Number(f.hour);
  const ampm = f.ampm?.toLowerCase();
  if (ampm !== undefined && hour >= 1 && hour <= 12) hour = (hour % 12) + (ampm.startsWith('p') ? 12 : 0);
  const wall = { year, month, day: Number(f.day), hour, minute: Number(f.minute), second: f.second === undefined ? 0 : Number(f.second) };
  const instant = wallTimeToInstant(wall, zone);
  if (instant.kind === 'instant') return instant;
  return { kind: 'none', reason: `report time: ${instant.reason}` };
}
