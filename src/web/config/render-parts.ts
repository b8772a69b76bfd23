// The pieces every configuration page is made of: the document with its header, problems, labelled fields, selects
// (the clock zones with the gateway's preselected), the unlock form and the diff. Every value goes through `html`.
import { html, type SafeHtml } from '../status/html.js';
import { paths } from '../status/paths.js';
import { layout } from '../status/layout.js';
import { hunks, type DiffLine } from '../../config/line-diff.js';
import type { FieldProblem } from './fields.js';
import { PROBLEMS_LISTED } from '../status/listed.js';

/** Per-request facts every configuration page needs. */
export interface ConfigPageContext {
  gatewayId: string;
  csrf: string;
  /** The unlocked person, or null. */
  admin: { name: string } | null;
  /** Why nobody can unlock (no admin token configured), or null. */
  unavailable: string | null;
  /** The configuration page to return to once unlocked. */
  next?: string;
}

/** A configuration page. */
export function configPage(ctx: ConfigPageContext, title: string, body: SafeHtml): string {
  const who = ctx.admin
    ? html`<span class="who">Changing as <strong>${ctx.admin.name}</strong></span>${hiddenForm(paths.configureLock, ctx.csrf, {}, 'Lock', 'secondary')}`
    : '';
  return layout(
    `labgate ${ctx.gatewayId}: ${title}`,
    html`<header class="top"><h1>labgate <small>${ctx.gatewayId} · ${title}</small></h1><nav class="top-links"><a href="${paths.page}">Status</a> <a href="${paths.configure}">Configure</a> ${who}</nav></header>
<main class="configure">${body}</main>`,
    true,
  );
}

/** Every problem, with where it is. */
export function problemList(problems: readonly FieldProblem[] | readonly { path: string; message: string }[], lead: string): SafeHtml {
  if (problems.length === 0) return html``;
  // A broken file can have thousands of problems: the first PROBLEMS_LISTED, and how many more.
  const items = problems
    .slice(0, PROBLEMS_LISTED)
    .map((p) => ('path' in p ? html`<li><code>${p.path}</code>: ${p.message}</li>` : html`<li>${p.message}</li>`));
  const more = problems.length - PROBLEMS_LISTED;
  if (more > 0) items.push(html`<li class="more">and ${more} more (<code>labgate check-config</code> lists them all)</li>`);
  return html`<div class="flash flash-error" role="alert" data-problems="${problems.length}"><p><strong>${lead}</strong></p><ul class="reasons">${items}</ul></div>`;
}

/** A labelled field with its problem under it. */
export function field(label: string, name: string, input: SafeHtml, problem?: string, hint?: string): SafeHtml {
  return html`<div class="field${problem ? ' field-error' : ''}"><label for="f-${name}">${label}</label>${input}
${hint ? html`<small class="note">${hint}</small>` : ''}${problem ? html`<small class="field-problem" data-problem-for="${name}">${problem}</small>` : ''}</div>`;
}

/** A text input. */
export function textInput(name: string, value: string, extra: { required?: boolean; placeholder?: string; size?: number } = {}): SafeHtml {
  return html`<input id="f-${name}" name="${name}" value="${value}"${extra.required ? html` required` : ''}${extra.placeholder ? html` placeholder="${extra.placeholder}"` : ''}${extra.size ? html` size="${extra.size}"` : ''} autocomplete="off" spellcheck="false">`;
}

/** A select; `options` are [value, label]. */
export function select(name: string, options: readonly (readonly [string, string])[], selected: string): SafeHtml {
  return html`<select id="f-${name}" name="${name}">${options.map(([value, label]) => html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`)}</select>`;
}

// Offsets for analyzers whose clock ignores daylight saving: every whole hour, and the half and three-quarter hours in use.
const OFFSETS = [
  ...Array.from({ length: 27 }, (_, i) => i - 12).map((h) => `${h < 0 ? '-' : '+'}${String(Math.abs(h)).padStart(2, '0')}:00`),
  '+03:30',
  '+04:30',
  '+05:30',
  '+05:45',
  '+06:30',
  '+09:30',
  '-03:30',
];

/** Every IANA zone, UTC and fixed offsets; `selected` first where it is not among them (a hand-written value). */
export function zoneSelect(name: string, selected: string): SafeHtml {
  const zones = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC'), ...OFFSETS];
  const all = zones.includes(selected) || selected === '' ? zones : [selected, ...zones];
  return select(
    name,
    all.map((z) => [z, /^[+-]\d\d:\d\d$/.test(z) ? `${z} (fixed offset, no daylight saving)` : z] as const),
    selected,
  );
}

/** A POST form of hidden fields and one button, with the CSRF token. */
export function hiddenForm(action: string, csrf: string, fields: Record<string, string>, label: string, kind = 'primary'): SafeHtml {
  const hidden = Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<form method="post" action="${action}" class="action"><input type="hidden" name="csrf" value="${csrf}">${hidden}<button type="submit" class="btn btn-${kind}">${label}</button></form>`;
}

/** The unlock form: the admin token and the person's name (what the audit log will call them). */
export function unlockForm(ctx: ConfigPageContext, problem: string | null = null): SafeHtml {
  if (ctx.unavailable) return html`<p class="note" data-unavailable>${ctx.unavailable}</p>`;
  return html`<form method="post" action="${paths.configureUnlock}" class="unlock" data-unlock><input type="hidden" name="csrf" value="${ctx.csrf}">${ctx.next ? html`<input type="hidden" name="next" value="${ctx.next}">` : ''}
<p>Changing the configuration needs the admin token (looking does not).</p>${problem ? html`<p class="flash flash-error" role="alert">${problem}</p>` : ''}
${field('Your name', 'name', textInput('name', '', { required: true, placeholder: 'as the audit log should name you' }))}
${field('Admin token', 'admintoken', html`<input id="f-admintoken" name="token" type="password" autocomplete="off" required>`)}
<button type="submit" class="btn btn-primary">Unlock changes</button></form>`;
}

/** A diff as the preview and the change log show it: changed lines with three lines around them. */
export function diffBlock(diff: readonly DiffLine[]): SafeHtml {
  const lines = hunks(diff).map((l) =>
    l === null
      ? html`<span class="diff-gap">…</span>`
      : html`<span class="diff-${l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : 'keep'}">${l.kind} ${l.text}</span>`,
  );
  // Each line is a block of its own (its background spans the width), so no newline between them.
  return html`<pre class="diff" data-diff>${lines}</pre>`;
}
