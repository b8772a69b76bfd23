// The report assembler: lines and the idle timeout in, finished reports out. Pure: no timers, no I/O;
// "arm the idle timer" is an effect and the timeout is an input (STYLE.md, state machines are pure).
import type { LineLayout, ResultColumns } from './options.js';

/** One result row as the printout shows it. */
export interface LineResult {
  code: string;
  value: string;
  unit?: string;
  flags?: string;
}

/** A complete report: its raw bytes (every line as received, delimiters included), what it said, what was wrong. */
export interface Report {
  raw: Buffer;
  fields: Record<string, string>;
  results: LineResult[];
  /** Lines that arrived damaged (a failed block check): the report is journaled, its results are not loaded. */
  problems: string[];
}

export interface AssemblerState {
  open: { lines: Buffer[]; fields: Record<string, string>; results: LineResult[]; problems: string[] } | undefined;
}

export type AssemblerInput = { kind: 'line'; raw: Buffer; text: string; problem?: string } | { kind: 'idle' };

export type AssemblerEffect = { kind: 'report'; report: Report } | { kind: 'arm-idle'; ms: number } | { kind: 'stray'; bytes: number };

/** No report open. */
export const initialAssemblerState: AssemblerState = { open: undefined };

/** Feeds one line (text without its delimiter) or the idle timeout; the given state is consumed. */
export function assemble(
  state: AssemblerState,
  input: AssemblerInput,
  layout: LineLayout,
  limits: { idleMs: number | undefined; maxReportLines: number },
): { state: AssemblerState; effects: AssemblerEffect[] } {
  if (input.kind === 'idle') return state.open ? { state: initialAssemblerState, effects: [finish(state.open)] } : { state, effects: [] };
  const effects: AssemblerEffect[] = [];
  let open = state.open;
  const start = layout.start.exec(input.text);
  if (start) {
    // A new start while a report is open: the open one ended without its end line.
    if (open) effects.push(finish(open));
    open = { lines: [], fields: {}, results: [], problems: [] };
    captureFields(open.fields, start.groups);
  }
  if (!open) return { state, effects: [...effects, { kind: 'stray', bytes: input.raw.length }] };
  open.lines.push(input.raw);
  if (input.problem !== undefined) open.problems.push(`line ${open.lines.length}: ${input.problem}`);
  for (const re of layout.fields) captureFields(open.fields, re.exec(input.text)?.groups);
  if (layout.result !== undefined) {
    const body = start ? input.text.slice(start.index + start[0].length) : input.text;
    for (const m of body.matchAll(layout.result)) open.results.push(resultOf(m.groups ?? {}));
  } else if (layout.columns !== undefined && layout.columns.rows.test(input.text)) {
    open.results.push(...rowAt(input.text, layout.columns));
  }
  if ((layout.end?.test(input.text) ?? false) || open.lines.length >= limits.maxReportLines) {
    return { state: initialAssemblerState, effects: [...effects, finish(open)] };
  }
  if (limits.idleMs !== undefined) effects.push({ kind: 'arm-idle', ms: limits.idleMs });
  return { state: { open }, effects };
}

function captureFields(into: Record<string, string>, groups: Record<string, string | undefined> | undefined): void {
  for (const [name, value] of Object.entries(groups ?? {})) {
    if (value !== undefined && value.trim() !== '' && into[name] === undefined) into[name] = value.trim();
  }
}

function resultOf(g: Record<string, string | undefined>): LineResult {
  const r: LineResult = { code: (g.code ?? '').trim(), value: (g.value ?? '').trim() };
  if (g.unit !== undefined) r.unit = g.unit.trim();
  if (g.flags !== undefined) r.flags = g.flags.trim();
  return r;
}

// A fixed-width row: each part is the text in its columns (1-based, inclusive), trimmed. With `analytes` the code is
// the column's own; a blank value column prints no result (the analyzer did not measure that analyte).
function rowAt(text: string, c: ResultColumns): LineResult[] {
  const at = ([first, last]: readonly [number, number]): string => text.slice(first - 1, last).trim();
  const read = (code: string, part: Pick<ResultColumns, 'unit' | 'flags'> & { value: readonly [number, number] }): LineResult => {
    const r: LineResult = { code, value: at(part.value) };
    if (part.unit !== undefined) r.unit = at(part.unit);
    if (part.flags !== undefined) r.flags = at(part.flags);
    return r;
  };
  if (c.analytes !== undefined) return c.analytes.map((a) => read(a.code, a)).filter((r) => r.value !== '');
  return [read(at(c.code!), { ...c, value: c.value! })];
}

function finish(open: NonNullable<AssemblerState['open']>): AssemblerEffect {
  return { kind: 'report', report: { raw: Buffer.concat(open.lines), fields: open.fields, results: open.results, problems: open.problems } };
}
