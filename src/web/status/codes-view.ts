// The codes an instrument has sent, held against its mapping as configured now: those whose results are rejected come
// first, each with the mapping line it needs. The line leaves the LOINC empty on purpose: copied as it is, the
// configuration refuses it (an empty LOINC is invalid), so a guessed code never reaches a sink.
import type { AnalyteMapping } from '../../config/mapping.js';
import { lookupAnalyte } from '../../config/mapping.js';
import type { CodeSeen } from '../../store/instrument-codes.js';
import type { CodeSeenView, InstrumentCodesView } from './source.js';

/** Codes listed per instrument on the page and in /status.json: those needing a mapping first, then the newest. */
export const CODES_SHOWN = 100;

/** The codes of each instrument in `instruments` (in that order); `mappingOf` is its mapping now (undefined: none). */
export function codesView(
  rows: readonly CodeSeen[],
  instruments: readonly string[],
  mappingOf: (id: string) => readonly AnalyteMapping[] | undefined,
): InstrumentCodesView[] {
  const byInstrument = new Map<string, CodeSeen[]>();
  for (const r of rows) {
    const list = byInstrument.get(r.instrumentId);
    if (list) list.push(r);
    else byInstrument.set(r.instrumentId, [r]);
  }
  return instruments.flatMap((instrumentId) => {
    const mapping = mappingOf(instrumentId) ?? [];
    const all = (byInstrument.get(instrumentId) ?? []).map((r) => codeView(r, mapping));
    if (all.length === 0) return [];
    const needsFirst = (a: CodeSeenView, b: CodeSeenView): number => Number(b.problem !== null) - Number(a.problem !== null);
    const codes = all.sort((a, b) => needsFirst(a, b) || b.lastAt - a.lastAt).slice(0, CODES_SHOWN);
    codes.sort((a, b) => needsFirst(a, b) || a.code.localeCompare(b.code));
    return [{ instrumentId, codes, total: all.length, needMapping: all.filter((c) => c.problem !== null).length }];
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
