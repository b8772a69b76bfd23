// A configuration form read into a change (every field checked, every problem named), and a change made into the
// instruments file's new text. The preview and the apply post the very same fields, so what is applied is what was
// shown: the apply makes the text again from the same version of the file, or is refused because the file moved on.
import { parseDocument } from 'yaml';
import type { AnalyteMapping } from '../../config/mapping.js';
import { editInstruments, type InstrumentEdit, type MappingRow, type NewInstrument } from '../../config/instrument-edits.js';
import { codeProblem, loincProblem, oneOf, textProblem, unitProblem, wholeNumber, type FieldProblem } from './fields.js';
import type { ChangeRecord, ConfigState } from './source.js';

/** What a form asks for. */
export type Change =
  | { kind: 'add'; instrument: NewInstrument }
  /** `covered`: every code the form held (a page of them); the mapping of the others stays as it is. */
  | { kind: 'mapping'; id: string; rows: MappingRow[]; formRows: number[]; covered: string[] }
  | { kind: 'copy-mapping'; id: string; from: string }
  | { kind: 'settings'; id: string; timezone: string; options: Record<string, unknown> }
  | { kind: 'service'; id: string; enabled: boolean }
  | { kind: 'restore'; version: string };

/** A form read: the change, or every problem of its fields; null when it is not one of the page's forms. */
export type ReadChange = { kind: 'ok'; change: Change } | { kind: 'invalid'; problems: FieldProblem[] } | null;

/** Mapping rows a form may carry (a page holds 100 and a blank one). */
export const MAX_ROWS = 500;
const DRIVERS = ['astm', 'hl7', 'line'] as const;
const PARITY = ['none', 'even', 'odd'] as const;

/** Reads the posted form of any configuration change. */
export function readChange(form: URLSearchParams): ReadChange {
  const get = (name: string): string => form.get(name) ?? '';
  const id = get('id').trim();
  switch (form.get('change')) {
    case 'add':
      return readAdd(get);
    case 'mapping':
      return id ? readMapping(id, get) : null;
    case 'copy-mapping':
      return id && get('from') ? ok({ kind: 'copy-mapping', id, from: get('from').trim() }) : null;
    case 'settings':
      return id ? readSettings(id, get) : null;
    case 'service':
      return id && ['true', 'false'].includes(get('enabled')) ? ok({ kind: 'service', id, enabled: get('enabled') === 'true' }) : null;
    case 'restore':
      return /^[0-9a-f]{16}$/.test(get('version')) ? ok({ kind: 'restore', version: get('version') }) : null;
    default:
      return null;
  }
}

const ok = (change: Change): ReadChange => ({ kind: 'ok', change });

function collect(problems: FieldProblem[], field: string, problem: string | null): void {
  if (problem !== null) problems.push({ field, message: problem });
}

function readAdd(get: (name: string) => string): ReadChange {
  const problems: FieldProblem[] = [];
  for (const field of ['id', 'timezone', 'path', 'host', 'allow']) collect(problems, field, textProblem(get(field), `the ${field}`));
  const driver = oneOf(get('driver'), DRIVERS, 'driver');
  if (driver !== 'astm' && driver !== 'hl7' && driver !== 'line') problems.push({ field: 'driver', message: driver });
  const options = readOptions(get('options'));
  if (typeof options === 'string') problems.push({ field: 'options', message: options });
  const transport = get('kind') === 'tcp-server' ? tcpTransport(get, problems) : serialTransport(get, problems);
  if (problems.length) return { kind: 'invalid', problems };
  const instrument: NewInstrument = { id: get('id').trim(), driver, timezone: get('timezone').trim(), transport };
  if (typeof options === 'object' && Object.keys(options).length) instrument.options = options;
  return ok({ kind: 'add', instrument });
}

function serialTransport(get: (name: string) => string, problems: FieldProblem[]): Record<string, unknown> {
  const baudRate = wholeNumber(get('baudRate'), 1, 115_200, 'baud rate');
  const dataBits = oneOf(get('dataBits'), ['7', '8'], 'data bits');
  const parity = oneOf(get('parity'), PARITY, 'parity');
  if (typeof baudRate === 'string') problems.push({ field: 'baudRate', message: baudRate });
  if (dataBits !== '7' && dataBits !== '8') problems.push({ field: 'dataBits', message: dataBits });
  if (!(PARITY as readonly string[]).includes(parity)) problems.push({ field: 'parity', message: parity });
  return { kind: 'serial', path: get('path').trim(), baudRate, dataBits: Number(dataBits), parity };
}

function tcpTransport(get: (name: string) => string, problems: FieldProblem[]): Record<string, unknown> {
  const port = wholeNumber(get('port'), 1, 65_535, 'port');
  if (typeof port === 'string') problems.push({ field: 'port', message: port });
  const allow = get('allow')
    .split(/[\s,]+/)
    .filter((a) => a !== '');
  const host = get('host').trim();
  return { kind: 'tcp-server', ...(host ? { host } : {}), port, ...(allow.length ? { allow } : {}) };
}

function readMapping(id: string, get: (name: string) => string): ReadChange {
  const count = Number(get('rows'));
  if (!Number.isInteger(count) || count < 0 || count > MAX_ROWS) return null;
  const problems: FieldProblem[] = [];
  const rows: MappingRow[] = [];
  const formRows: number[] = [];
  const covered: string[] = [];
  for (let n = 0; n < count; n++) {
    const [code, loinc, unit] = [get(`code.${n}`).trim(), get(`loinc.${n}`).trim(), get(`unit.${n}`).trim()];
    if (code !== '') covered.push(code);
    if (code === '' && loinc === '' && unit === '') continue;
    const before = problems.length;
    collect(problems, `code.${n}`, codeProblem(code));
    if (unit !== '*') collect(problems, `unit.${n}`, unitProblem(unit));
    // A row without a LOINC stays unmapped (its results go on being rejected, kept for reprocessing).
    if (loinc !== '') collect(problems, `loinc.${n}`, loincProblem(loinc));
    if (problems.length > before || loinc === '') continue;
    rows.push({ code, loinc, ...(unit === '*' ? {} : { unit: unit === '' ? null : unit }), ...(get(`qc.${n}`) === 'qc' ? { qc: true } : {}) });
    formRows.push(n);
  }
  return problems.length ? { kind: 'invalid', problems } : ok({ kind: 'mapping', id, rows, formRows, covered });
}

function readSettings(id: string, get: (name: string) => string): ReadChange {
  const problems: FieldProblem[] = [];
  collect(problems, 'timezone', textProblem(get('timezone'), 'the clock zone'));
  const options = readOptions(get('options'));
  if (typeof options === 'string') problems.push({ field: 'options', message: options });
  if (problems.length || typeof options === 'string') return { kind: 'invalid', problems };
  return ok({ kind: 'settings', id, timezone: get('timezone').trim(), options });
}

/** Driver options typed as YAML (or JSON): a mapping, no tags, no aliases; the driver's schema checks the rest. */
export function readOptions(text: string): Record<string, unknown> | string {
  if (text.trim() === '') return {};
  // Line breaks and tabs belong to YAML; any other control character does not.
  // eslint-disable-next-line no-control-regex -- control characters are what it finds
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return 'the options hold a control character';
  const markup = textProblem(text.replace(/[\r\n\t]/g, ' '), 'the options');
  if (markup) return markup;
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) return `the options are not YAML: ${doc.errors[0]!.message.split('\n')[0]}`;
  if (doc.warnings.length || /(^|[\s[{,])[&*!]/.test(text.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, '""'))) {
    return 'the options use YAML tags, anchors or aliases; write the values out';
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return 'expected the options as a mapping (key: value lines), e.g. framing: none';
  return value as Record<string, unknown>;
}

/** The instruments file a change makes, what it is audited as, or why it cannot be made to the configuration as it is. */
export async function proposedText(
  change: Change,
  state: ConfigState,
  past: (version: string) => Promise<string | null>,
): Promise<{ kind: 'ok'; text: string; record: ChangeRecord } | { kind: 'refused'; message: string }> {
  if (change.kind === 'restore') {
    const text = await past(change.version);
    if (text === null) return { kind: 'refused', message: `version ${change.version} is no longer kept (the ten newest are)` };
    return { kind: 'ok', text, record: { action: 'config-restore', subject: null, summary: `version ${change.version} restored` } };
  }
  const target = change.kind === 'add' ? undefined : state.instruments.find((i) => i.config.id === change.id);
  if (change.kind !== 'add' && target && !target.managed) {
    return { kind: 'refused', message: `${change.id} is configured in ${state.mainFile}, which only IT changes; change it there` };
  }
  const edit = toEdit(change, state);
  if (typeof edit === 'string') return { kind: 'refused', message: edit };
  const made = editInstruments(state.text, edit.edit);
  if (made.kind === 'refused') return made;
  return {
    kind: 'ok',
    text: made.text,
    record: { action: 'config-change', subject: change.kind === 'add' ? change.instrument.id : change.id, summary: edit.summary },
  };
}

function toEdit(change: Exclude<Change, { kind: 'restore' }>, state: ConfigState): { edit: InstrumentEdit; summary: string } | string {
  switch (change.kind) {
    case 'add': {
      const t = change.instrument.transport;
      const where = t['kind'] === 'serial' ? `on ${String(t['path'])}` : `listening on port ${String(t['port'])}`;
      return { edit: change, summary: `${change.instrument.id} added (${change.instrument.driver} ${where})` };
    }
    case 'mapping': {
      const mapping = merged(state.instruments.find((i) => i.config.id === change.id)?.config.mapping ?? [], change.rows, new Set(change.covered));
      return {
        edit: { kind: 'mapping', id: change.id, mapping },
        summary: `${change.id}: mapping of ${mapping.length} code${mapping.length === 1 ? '' : 's'}`,
      };
    }
    case 'copy-mapping':
      return copyMapping(change, state);
    case 'settings':
      return { edit: change, summary: `${change.id}: clock zone ${change.timezone}, options ${Object.keys(change.options).length ? 'set' : 'none'}` };
    case 'service':
      return { edit: change, summary: `${change.id} ${change.enabled ? 'back in service' : 'taken out of service'}` };
  }
}

// A form holds a page of the codes: its rows replace the entries of the codes it held where they stood (a code left
// without a LOINC loses its entry), a code new to the mapping goes at the end, and the other codes' entries stay as
// they are, so the file changes only where the form did.
function merged(existing: readonly AnalyteMapping[], rows: readonly MappingRow[], covered: ReadonlySet<string>): MappingRow[] {
  const byCode = new Map<string, MappingRow[]>();
  for (const r of rows) byCode.set(r.code, [...(byCode.get(r.code) ?? []), r]);
  const out: MappingRow[] = [];
  for (const m of existing) {
    if (!covered.has(m.code)) out.push(asRow(m));
    else if (byCode.has(m.code)) out.push(...byCode.get(m.code)!);
    byCode.delete(m.code);
  }
  for (const added of byCode.values()) out.push(...added);
  return out;
}

function asRow(m: AnalyteMapping): MappingRow {
  return { code: m.code, loinc: m.loinc, ...(m.unit !== undefined ? { unit: m.unit } : {}), ...(m.qc ? { qc: true } : {}) };
}

// Another instrument's rows for the codes this one does not map yet; its own rows stay as they are.
function copyMapping(change: { id: string; from: string }, state: ConfigState): { edit: InstrumentEdit; summary: string } | string {
  const target = state.instruments.find((i) => i.config.id === change.id);
  const source = state.instruments.find((i) => i.config.id === change.from);
  if (!target || !source) return `there is no instrument '${target ? change.from : change.id}'`;
  if (source.config.driver !== target.config.driver)
    return `${change.from} speaks ${source.config.driver}, ${change.id} ${target.config.driver}: not the same model`;
  const own = new Set(target.config.mapping.map((m) => m.code));
  const added = source.config.mapping.filter((m) => !own.has(m.code));
  if (added.length === 0) return `${change.from} maps no code that ${change.id} does not map already`;
  const rows = [...target.config.mapping, ...added].map(asRow);
  return {
    edit: { kind: 'mapping', id: change.id, mapping: rows },
    summary: `${change.id}: ${added.length} code${added.length === 1 ? '' : 's'} mapped as on ${change.from}`,
  };
}
