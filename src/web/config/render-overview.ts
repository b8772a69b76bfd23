// /configure: where the configuration comes from, the ports heard but not configured, every instrument with what may be
// changed here, the previous versions to restore and the changes made, with who made them.
import { html, type SafeHtml } from '../status/html.js';
import { paths } from '../status/paths.js';
import { relativeTime } from '../status/format.js';
import { configPage, hiddenForm, problemList, unlockForm, type ConfigPageContext } from './render-parts.js';
import type { ChangeView, ConfigState, InstrumentEntry, NewPortView } from './source.js';

const query = (path: string, params: Record<string, string>): string => `${path}?${new URLSearchParams(params).toString()}`;

function transportText(e: InstrumentEntry): string {
  const t = e.config.transport;
  if (t.kind === 'serial') return `${t.path} ${t.baudRate} ${t.dataBits}${t.parity === 'none' ? 'N' : t.parity === 'even' ? 'E' : 'O'}${t.stopBits}`;
  return t.kind === 'tcp-server' ? `listening on ${t.host}:${t.port}` : `to ${t.host}:${t.port}`;
}

function newPortCard(p: NewPortView, ctx: ConfigPageContext): SafeHtml {
  const add = p.found && ctx.admin ? html`<a class="btn btn-primary" href="${query(paths.configureAdd, { port: p.path })}">Use these settings</a>` : '';
  return html`<article class="card card-amber" data-new-port="${p.path}" data-detecting="${p.state}"><h3>New port</h3><p><code>${p.path}</code></p>
<p class="finding"><strong>${p.summary}</strong></p>${p.note ? html`<p class="note">${p.note}</p>` : ''}
<p class="note">Listening only: nothing is answered until it is added.</p>${add}</article>`;
}

function instrumentRow(e: InstrumentEntry, s: ConfigState, ctx: ConfigPageContext): SafeHtml {
  const id = e.config.id;
  const base = { base: s.version, id };
  const actions =
    e.managed && ctx.admin
      ? html`<a class="btn btn-secondary" href="${query(paths.configureMapping, { id })}">Codes and mapping</a>
<a class="btn btn-secondary" href="${query(paths.configureInstrument, { id })}">Clock zone and options</a>
${
  e.config.enabled
    ? hiddenForm(paths.configurePreview, ctx.csrf, { ...base, change: 'service', enabled: 'false' }, 'Take out of service', 'secondary')
    : hiddenForm(paths.configurePreview, ctx.csrf, { ...base, change: 'service', enabled: 'true' }, 'Back in service', 'secondary')
}`
      : e.managed
        ? ''
        : html`<small class="note">in ${s.mainFile}: IT changes it there</small>`;
  const state = e.config.enabled ? (e.link ?? 'not running') : 'out of service';
  return html`<tr data-configured="${id}"><td><strong>${id}</strong></td><td>${e.config.driver}</td><td><code>${transportText(e)}</code></td>
<td>${e.config.timezone}</td><td class="num">${e.config.mapping.length}</td><td data-state>${state}</td><td class="row">${actions}</td></tr>`;
}

function changeRow(c: ChangeView, now: number): SafeHtml {
  return html`<li data-change><strong>${c.summary}</strong> · ${c.actor} · ${relativeTime(c.at, now)}
${c.diff ? html`<details><summary>Diff</summary><pre class="diff">${c.diff}</pre></details>` : ''}</li>`;
}

/** The configuration overview. */
export function overviewPage(s: ConfigState, ctx: ConfigPageContext, now: number, flash: { text: string; ok: boolean } | null = null): string {
  const rows = s.instruments.map((e) => instrumentRow(e, s, ctx));
  const restore = (version: string): SafeHtml =>
    ctx.admin ? hiddenForm(paths.configurePreview, ctx.csrf, { base: s.version, change: 'restore', version }, 'Preview restoring it', 'secondary') : html``;
  const history = s.history.map(
    (h) => html`<li data-version="${h.version}"><code>${h.version}</code>, replaced ${relativeTime(h.replacedAt, now)} ${restore(h.version)}</li>`,
  );
  return configPage(
    ctx,
    'Configure',
    html`${flash ? html`<p class="flash${flash.ok ? '' : ' flash-error'}" role="${flash.ok ? 'status' : 'alert'}">${flash.text}</p>` : ''}${ctx.admin ? '' : unlockForm(ctx)}
<p class="note">What runs is <code>${s.mainFile}</code> (IT's; read-only here) and <code>${s.instrumentsFile}</code> (the instruments this page manages, version
<code data-version="${s.version}">${s.version}</code>), checked as one.</p>
${problemList(s.problems, 'The configuration on disk has problems (a hand edit?); the gateway runs on the last valid one:')}
${s.newPorts.length ? html`<section id="new-ports"><h2>Ports heard, not configured</h2><div class="cards">${s.newPorts.map((p) => newPortCard(p, ctx))}</div></section>` : ''}
<section id="configured"><h2>Instruments</h2><div class="scroll"><table><thead><tr><th>Id</th><th>Driver</th><th>Port</th><th>Clock zone</th><th>Codes mapped</th><th>Now</th><th></th></tr></thead>
<tbody>${rows}</tbody></table></div>
${ctx.admin ? html`<p><a class="btn btn-secondary" href="${query(paths.configureAdd, { kind: 'tcp' })}">Add a network (TCP) instrument</a></p>` : ''}</section>
<section id="versions"><h2>Previous versions</h2>${history.length ? html`<ul class="reasons">${history}</ul>` : html`<p class="empty">None yet.</p>`}</section>
<section id="changes"><h2>Changes</h2>${s.changes.length ? html`<ul class="changes">${s.changes.map((c) => changeRow(c, now))}</ul>` : html`<p class="empty">No change made on this page yet.</p>`}</section>`,
  );
}
