// The forms: add an instrument (from a port's detected settings, or a TCP listener), its clock zone and driver options,
// and its codes' mapping. Each posts to the preview with the version of the file it was made from; shown again after a
// refusal, it keeps what was typed and names every problem at its field.
import { stringify } from 'yaml';
import { suggestLoinc } from '../../config/analyte-suggestions.js';
import { mappingNeeds } from '../../config/mapping-need.js';
import { baudRates } from '../../config/schema.js';
import { html, type SafeHtml } from '../status/html.js';
import { paths } from '../status/paths.js';
import type { FieldProblem } from './fields.js';
import { configPage, field, problemList, select, textInput, zoneSelect, type ConfigPageContext } from './render-parts.js';
import type { ConfigState, InstrumentEntry, NewPortView, SeenCode } from './source.js';

/** What a form shows: the values typed (or the defaults) and the problems found with them. */
export interface FormValues {
  get(name: string): string | undefined;
  problems: readonly FieldProblem[];
}

const at = (v: FormValues, field: string): string | undefined => v.problems.find((p) => p.field === field)?.message;
const value = (v: FormValues, name: string, fallback: string): string => v.get(name) ?? fallback;

function form(
  ctx: ConfigPageContext,
  base: string,
  change: string,
  hidden: Record<string, string>,
  body: SafeHtml,
  problems: readonly FieldProblem[],
): SafeHtml {
  const fields = Object.entries({ change, base, ...hidden }).map(([name, v]) => html`<input type="hidden" name="${name}" value="${v}">`);
  return html`${problemList(problems, 'Not changed; every problem is named below:')}
<form method="post" action="${paths.configurePreview}" class="config-form" data-form="${change}"><input type="hidden" name="csrf" value="${ctx.csrf}">${fields}
${body}<p><button type="submit" class="btn btn-primary">Preview the change</button> <a href="${paths.configure}">Cancel</a></p></form>`;
}

/** Adding an instrument: from a port's detected settings (`port`), or a TCP listener (`port` null). */
export function addPage(s: ConfigState, ctx: ConfigPageContext, port: NewPortView | null, v: FormValues): string {
  const found = port?.found;
  const driver = select(
    'driver',
    [
      ['astm', 'ASTM (LIS01-A2 / LIS2-A2)'],
      ['hl7', 'HL7 v2 (MLLP)'],
      ['line', 'Printed lines'],
    ],
    value(v, 'driver', found?.driver ?? 'astm'),
  );
  const common = html`${field('Id', 'id', textInput('id', value(v, 'id', ''), { required: true, placeholder: 'chem2' }), at(v, 'id'), 'letters, digits, dot, dash or underscore; part of every result')}
${field('Driver', 'driver', driver, at(v, 'driver'))}
${field("Analyzer clock's zone", 'timezone', zoneSelect('timezone', value(v, 'timezone', s.gatewayZone)), at(v, 'timezone'), `this gateway's zone is ${s.gatewayZone}`)}`;
  const serial = html`${field('Port', 'path', html`<code>${value(v, 'path', port?.path ?? '')}</code>`, at(v, 'path'))}
${field(
  'Baud rate',
  'baudRate',
  select(
    'baudRate',
    baudRates.map((b) => [String(b), String(b)] as const),
    value(v, 'baudRate', String(found?.baudRate ?? 9600)),
  ),
  at(v, 'baudRate'),
)}
${field(
  'Data bits',
  'dataBits',
  select(
    'dataBits',
    [
      ['8', '8'],
      ['7', '7'],
    ],
    value(v, 'dataBits', String(found?.dataBits ?? 8)),
  ),
  at(v, 'dataBits'),
)}
${field(
  'Parity',
  'parity',
  select(
    'parity',
    [
      ['none', 'none'],
      ['even', 'even'],
      ['odd', 'odd'],
    ],
    value(v, 'parity', found?.parity ?? 'none'),
  ),
  at(v, 'parity'),
)}`;
  const tcp = html`${field('Listening port', 'port', textInput('port', value(v, 'port', ''), { required: true, placeholder: '5100' }), at(v, 'port'), 'labgate listens; the analyzer connects')}
${field('Interface', 'host', textInput('host', value(v, 'host', ''), { placeholder: '0.0.0.0 (all)' }), at(v, 'host'))}
${field('Allowed addresses', 'allow', textInput('allow', value(v, 'allow', ''), { placeholder: '10.20.1.31, 10.20.2.0/24' }), at(v, 'allow'), 'the analyzer or its terminal server; empty: anyone')}`;
  const options = optionsField(v, found && Object.keys(found.options).length ? stringify(found.options, { lineWidth: 0 }) : '');
  const isTcp = port === null;
  const hidden: Record<string, string> = isTcp ? { kind: 'tcp-server' } : { kind: 'serial', path: value(v, 'path', port.path) };
  const lead = port ? html`<p class="finding"><strong>${port.summary}</strong></p>${port.note ? html`<p class="note">${port.note}</p>` : ''}` : '';
  return configPage(
    ctx,
    'Add an instrument',
    html`<h2>Add an instrument</h2>${lead}${form(ctx, s.version, 'add', hidden, html`${common}${isTcp ? tcp : serial}${options}`, v.problems)}`,
  );
}

function optionsField(v: FormValues, current: string): SafeHtml {
  return field(
    'Driver options',
    'options',
    html`<textarea id="f-options" name="options" rows="5" spellcheck="false">${value(v, 'options', current)}</textarea>`,
    at(v, 'options'),
    'YAML, as in the driver README (e.g. framing: none); empty for the standard',
  );
}

/** An instrument's clock zone and driver options. */
export function settingsPage(s: ConfigState, ctx: ConfigPageContext, e: InstrumentEntry, v: FormValues): string {
  const options = Object.keys(e.config.options).length ? stringify(e.config.options, { lineWidth: 0 }) : '';
  const body = html`${field("Analyzer clock's zone", 'timezone', zoneSelect('timezone', value(v, 'timezone', e.config.timezone)), at(v, 'timezone'))}${optionsField(v, options)}`;
  return configPage(
    ctx,
    `${e.config.id}: settings`,
    html`<h2>${e.config.id}: clock zone and options</h2>${form(ctx, s.version, 'settings', { id: e.config.id }, body, v.problems)}`,
  );
}

/** Rows a page of the mapping form holds, beside its blank row. */
export const MAPPING_PAGE = 100;

type Row = { code: string; seen: SeenCode | null; mapped: InstrumentEntry['config']['mapping'][number] | null };

/** The mapping rows: the codes the instrument sent (those needing a mapping first), then those only mapped. */
function rows(e: InstrumentEntry, codes: readonly SeenCode[]): Row[] {
  const byCode = new Map(e.config.mapping.map((m) => [m.code, m]));
  const judge = mappingNeeds(e.config.mapping);
  const needs = (c: SeenCode): number => (judge(c.code, c.lastUnit, c.lastValue).need === null ? 0 : 1);
  const seen = [...codes].sort((a, b) => needs(b) - needs(a)).map((c) => ({ code: c.code, seen: c, mapped: byCode.get(c.code) ?? null }));
  const sent = new Set(codes.map((c) => c.code));
  const only = e.config.mapping.filter((m) => !sent.has(m.code)).map((m) => ({ code: m.code, seen: null, mapped: m }));
  return [...seen, ...only];
}

/** How many pages the mapping form of these codes has. */
export function mappingPages(e: InstrumentEntry, codes: readonly SeenCode[]): number {
  return Math.max(1, Math.ceil(rows(e, codes).length / MAPPING_PAGE));
}

function mappingPager(id: string, page: number, pages: number): SafeHtml | string {
  if (pages <= 1) return '';
  const href = (n: number): string => `${paths.configureMapping}?${new URLSearchParams({ id, page: String(n) }).toString()}`;
  const previous = page > 1 ? html`<a class="btn btn-secondary" rel="prev" href="${href(page - 1)}">Previous page</a>` : '';
  const next = page < pages ? html`<a class="btn btn-secondary" rel="next" href="${href(page + 1)}">Next page</a>` : '';
  return html`<p class="note">Each page is previewed and applied on its own: the codes on the other pages keep their mapping.</p>
<nav class="row pager" data-mapping-pager="${id}">${previous}<span>Page ${page} of ${pages}</span>${next}</nav>`;
}

function unitText(unit: string | null | undefined): string {
  return unit === undefined ? '*' : (unit ?? '');
}

/** A page (from 1) of an instrument's codes in one form, with a blank row, and copying another instrument's mapping. */
export function mappingPage(s: ConfigState, ctx: ConfigPageContext, e: InstrumentEntry, codes: readonly SeenCode[], v: FormValues, page = 1): string {
  const every = rows(e, codes);
  const pages = Math.max(1, Math.ceil(every.length / MAPPING_PAGE));
  const at1 = Math.min(page, pages);
  const all = [...every.slice((at1 - 1) * MAPPING_PAGE, at1 * MAPPING_PAGE), { code: '', seen: null, mapped: null }];
  const body = all.map((r, n) => {
    const suggestion = r.mapped ? null : suggestLoinc(r.code, r.seen?.lastUnit ?? null);
    const code = r.code
      ? html`<code>${r.code}</code><input type="hidden" name="code.${n}" value="${r.code}">`
      : textInput(`code.${n}`, value(v, `code.${n}`, ''), { placeholder: 'a code not seen yet', size: 10 });
    const suggest = suggestion
      ? html`<div class="suggestion" data-suggestion="${suggestion.loinc}">Suggested: <code>${suggestion.loinc}</code> ${suggestion.name} <button type="button" class="btn btn-secondary" data-fill="f-loinc.${n}" data-value="${suggestion.loinc}">Use</button></div>`
      : '';
    const problems = [`code.${n}`, `loinc.${n}`, `unit.${n}`].map((f) => at(v, f)).filter((p): p is string => p !== undefined);
    const last = r.seen ? html`${r.seen.lastValue ?? ''} ${r.seen.lastUnit ?? ''}` : html`<span class="never">not seen</span>`;
    return html`<tr data-row="${r.code}"${problems.length ? html` class="field-error"` : ''}><td>${code}</td><td class="num">${r.seen?.seen ?? 0}</td><td>${last}</td>
<td>${textInput(`loinc.${n}`, value(v, `loinc.${n}`, r.mapped?.loinc ?? ''), { size: 9 })}${suggest}${problems.map((p) => html`<small class="field-problem">${p}</small>`)}</td>
<td>${textInput(`unit.${n}`, value(v, `unit.${n}`, r.mapped ? unitText(r.mapped.unit) : (r.seen?.lastUnit ?? '')), { size: 8 })}</td>
<td>${select(
      `qc.${n}`,
      [
        ['patient', 'patient'],
        ['qc', 'QC (control)'],
      ],
      value(v, `qc.${n}`, r.mapped?.qc ? 'qc' : 'patient'),
    )}</td></tr>`;
  });
  const table = html`<p class="note">A row left without a LOINC stays unmapped (its results are kept, rejected, until it is). Unit as the analyzer sends it: empty for none, * for any.</p>
<div class="scroll"><table><thead><tr><th>Code</th><th>Seen</th><th>Last value</th><th>LOINC</th><th>Unit</th><th>Results are</th></tr></thead><tbody>${body}</tbody></table></div>`;
  const sameModel = s.instruments.filter((o) => o.config.id !== e.config.id && o.config.driver === e.config.driver && o.config.mapping.length > 0);
  const copy = sameModel.length
    ? html`<h3>Copy from another ${e.config.driver} instrument</h3><form method="post" action="${paths.configurePreview}" class="config-form" data-form="copy-mapping">
<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="change" value="copy-mapping"><input type="hidden" name="base" value="${s.version}"><input type="hidden" name="id" value="${e.config.id}">
${field(
  'From',
  'from',
  select(
    'from',
    sameModel.map(
      (o) =>
        [
          o.config.id,
          `${o.config.id} (${o.config.mapping.length} codes, ${o.config.mapping.filter((m) => codes.some((c) => c.code === m.code)).length} of them seen from ${e.config.id})`,
        ] as const,
    ),
    sameModel[0]!.config.id,
  ),
)}
<button type="submit" class="btn btn-secondary">Preview the copy</button></form>`
    : '';
  return configPage(
    ctx,
    `${e.config.id}: mapping`,
    html`<h2>${e.config.id}: codes and mapping</h2>${mappingPager(e.config.id, at1, pages)}${form(ctx, s.version, 'mapping', { id: e.config.id, rows: String(all.length), page: String(at1) }, table, v.problems)}${copy}`,
  );
}
