// Which form a change came from, shown again with what was typed and every problem at its field: the form's own checks,
// and the whole configuration's (check-config's problems, which name a path in the instruments file, are put back on
// the field they concern).
import { listedInstruments } from '../../config/instrument-edits.js';
import type { ConfigProblem } from '../../config/problem.js';
import type { Change } from './changes.js';
import type { FieldProblem } from './fields.js';
import { addPage, mappingPage, settingsPage, type FormValues } from './render-forms.js';
import { overviewPage } from './render-overview.js';
import type { ConfigPageContext } from './render-parts.js';
import type { ConfigSource, ConfigState, NewPortView } from './source.js';

const TRANSPORT_FIELDS: Record<string, string> = {
  path: 'path',
  port: 'port',
  host: 'host',
  allow: 'allow',
  baudRate: 'baudRate',
  dataBits: 'dataBits',
  parity: 'parity',
};

/** The whole check's problems, each on the form field it concerns where there is one. */
export function onFields(problems: readonly ConfigProblem[], change: Change | null, s: ConfigState): FieldProblem[] {
  const listed = listedInstruments(s.text);
  const index =
    change === null || change.kind === 'restore' ? -1 : change.kind === 'add' ? listed.length : listed.findIndex((i) => String(i['id']).trim() === change.id);
  const prefix = `${s.instrumentsFile}:instruments[${index}]`;
  return problems.map((p) => {
    const rest = index >= 0 && p.path.startsWith(prefix) ? p.path.slice(prefix.length) : null;
    const field = rest === null ? null : fieldOf(rest, change!);
    return field === null ? { field: null, message: `${p.path}: ${p.message}` } : { field, message: p.message };
  });
}

function fieldOf(rest: string, change: Change): string | null {
  const m = /^\.(id|driver|timezone|options|transport\.(\w+)|mapping\[(\d+)\]\.?(\w*))/.exec(rest);
  if (!m) return null;
  if (m[2]) return TRANSPORT_FIELDS[m[2]] ?? null;
  if (m[3] !== undefined) {
    const row = change.kind === 'mapping' ? change.formRows[Number(m[3])] : undefined;
    return row === undefined ? null : `${m[4] === 'code' || m[4] === 'unit' ? m[4] : 'loinc'}.${row}`;
  }
  return m[1]!;
}

/** The form a posted change came from, filled with the posted values and the problems; the overview for the others. */
export async function formAgain(
  source: ConfigSource,
  s: ConfigState,
  ctx: ConfigPageContext,
  form: URLSearchParams,
  problems: readonly FieldProblem[],
  now: number,
): Promise<string> {
  const values: FormValues = { get: (name) => form.get(name) ?? undefined, problems };
  const kind = form.get('change');
  const entry = s.instruments.find((i) => i.config.id === (form.get('id') ?? '').trim());
  if (kind === 'add') {
    const path = form.get('path') ?? '';
    const port: NewPortView | null =
      form.get('kind') === 'serial' ? (s.newPorts.find((p) => p.path === path) ?? { path, state: 'found', summary: path, note: null, found: null }) : null;
    return addPage(s, ctx, port, values);
  }
  if ((kind === 'mapping' || kind === 'copy-mapping') && entry) {
    // A copy's problem is the form's as a whole: the mapping form is shown as it is, the problem above it.
    const page = /^[1-9][0-9]{0,5}$/.test(form.get('page') ?? '') ? Number(form.get('page')) : 1;
    return mappingPage(s, ctx, entry, await source.codesOf(entry.config.id), kind === 'copy-mapping' ? { get: () => undefined, problems } : values, page);
  }
  if (kind === 'settings' && entry) return settingsPage(s, ctx, entry, values);
  return overviewPage(s, ctx, now, { text: `Not changed: ${problems.map((p) => p.message).join('; ')}`, ok: false });
}
