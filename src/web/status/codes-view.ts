// The codes an instrument has sent, held against its mapping as configured now: those whose results are rejected come
// first, each with the mapping line it needs, then the most recently seen; listed a page at a time. The line leaves
// the LOINC empty on purpose: copied as it is, the configuration refuses it (an empty LOINC is invalid), so a guessed
// code never reaches a sink.
import type { AnalyteMapping } from '../../config/mapping.js';
import { mappingNeeds } from '../../config/mapping-need.js';
import type { CodeSeen } from '../../store/instrument-codes.js';
import type { CodeSeenView, InstrumentCodesView } from './source.js';

/** Codes listed a page: the status page and /status.json show the first page of each instrument, /codes the others. */
export const CODES_SHOWN = 100;

/**
 * Page `page` (from 1) of one instrument's codes (`rows`, at most the store's bound); `mapping` is its mapping now
 * (undefined: none). A page past the last lists no code; `pages` says how many there are (at least 1).
 */
export function codesPage(instrumentId: string, rows: readonly CodeSeen[], mapping: readonly AnalyteMapping[] | undefined, page = 1): InstrumentCodesView {
  const judge = mappingNeeds(mapping ?? []);
  const all = rows.map((r) => codeView(r, judge));
  const needsFirst = (a: CodeSeenView, b: CodeSeenView): number => Number(b.problem !== null) - Number(a.problem !== null);
  all.sort((a, b) => needsFirst(a, b) || b.lastAt - a.lastAt || (a.code < b.code ? -1 : 1));
  // Within a page, the codes needing a mapping, then the others, each by code: easier to read than by time.
  const codes = all.slice((page - 1) * CODES_SHOWN, page * CODES_SHOWN).sort((a, b) => needsFirst(a, b) || a.code.localeCompare(b.code));
  const needMapping = all.filter((c) => c.problem !== null).length;
  return { instrumentId, codes, total: all.length, needMapping, page, pages: Math.max(1, Math.ceil(all.length / CODES_SHOWN)) };
}

function codeView(r: CodeSeen, judge: ReturnType<typeof mappingNeeds>): CodeSeenView {
  const base = { code: r.code, seen: r.seen, lastValue: r.lastValue, lastUnit: r.lastUnit, lastAt: r.lastAt };
  const { entry, need } = judge(r.code, r.lastUnit, r.lastValue);
  if (!entry) return { ...base, loinc: null, problem: 'not mapped', yaml: mappingLine(r.code, '', r.lastUnit) };
  return { ...base, loinc: entry.loinc, problem: need, yaml: mappingLine(entry.code, entry.loinc, need === 'unit differs' ? r.lastUnit : entry.unit) };
}

/** One `mapping:` list item; JSON strings are YAML double-quoted scalars, escapes included. */
export function mappingLine(code: string, loinc: string, unit: string | null | undefined): string {
  const unitPart = unit === undefined ? '' : `, unit: ${unit === null ? 'null' : JSON.stringify(unit)}`;
  return `- { code: ${JSON.stringify(code)}, loinc: ${JSON.stringify(loinc)}${unitPart} }`;
}
