// The codes an instrument has sent, held against its mapping as configured now: those whose results are rejected come
// first, each with the mapping line it needs. The line leaves the LOINC empty on purpose: copied as it is, the
// configuration refuses it (an empty LOINC is invalid), so a guessed code never reaches a sink.
import type { AnalyteMapping } from '../../config/mapping.js';
import { lookupAnalyte } from '../../config/mapping.js';
import type { CodeSeen } from '../../store/instrument-codes.js';
import type { CodeSeenView, InstrumentCodesView } from './source.js';

/** The codes of each instrument in `instruments` (in that order); `mappingOf` is its mapping now (undefined: none). */
export function codesView(
  rows: readonly CodeSeen[],
  instruments: readonly string[],
  mappingOf: (id: string) => readonly AnalyteMapping[] | undefined,
): InstrumentCodesView[] {
  return instruments.flatMap((instrumentId) => {
    const mapping = mappingOf(instrumentId) ?? [];
    const codes = rows.filter((r) => r.instrumentId === instrumentId).map((r) => codeView(r, mapping));
    if (codes.length === 0) return [];
    codes.sort((a, b) => Number(b.problem !== null) - Number(a.problem !== null) || a.code.localeCompare(b.code));
    return [{ instrumentId, codes }];
  });
}

function codeView(r: CodeSeen, mapping: readonly AnalyteMapping[]): CodeSeenView {
  const base = { code: r.code, seen: r.seen, lastValue: r.lastValue, lastUnit: r.lastUnit, lastAt: r.lastAt };
  const entry = mapping.find((m) => m.code === r.code.trim());
  if (!entry) return { ...base, loinc: null, problem: 'not mapped', yaml: mappingLine(r.code, '', r.lastUnit) };
  const found = lookupAnalyte(mapping, r.code, r.lastUnit);
  // A code seen only in a rejection from before the upgrade has no unit kept: it is not called a mismatch.
  const differs = found.kind === 'rejected' && r.lastValue !== null;
  return {
    ...base,
    loinc: entry.loinc,
    problem: differs ? 'unit differs' : null,
    yaml: mappingLine(entry.code, entry.loinc, differs ? r.lastUnit : entry.unit),
  };
}

/** One `mapping:` list item; JSON strings are YAML double-quoted scalars, escapes included. */
export function mappingLine(code: string, loinc: string, unit: string | null | undefined): string {
  const unitPart = unit === undefined ? '' : `, unit: ${unit === null ? 'null' : JSON.stringify(unit)}`;
  return `- { code: ${JSON.stringify(code)}, loinc: ${JSON.stringify(loinc)}${unitPart} }`;
}
