// Codes seen: per instrument, the analyzer codes it has sent, those without a working mapping first, with the lines
// to add under the instrument's `mapping:`, a page at a time (the first on the status page, the others at /codes).
// Values are shown as sent, escaped, control characters as their codes.
import { html, type SafeHtml } from './html.js';
import { yamlBlock } from './render-detection.js';
import { ago } from './render-marks.js';
import { paths } from './paths.js';
import { CODES_SHOWN } from './codes-view.js';
import type { CodeSeenView, InstrumentCodesView, StatusSnapshot } from './source.js';

function codeRow(c: CodeSeenView, now: number): SafeHtml {
  const value = c.lastValue === null ? html`<span class="never">not kept</span>` : html`${c.lastValue} ${c.lastUnit ?? ''}`;
  const mapping =
    c.problem === null ? html`<code>${c.loinc ?? ''}</code>` : html`<span class="reason">${c.problem}</span>${c.loinc ? html` <code>${c.loinc}</code>` : ''}`;
  return html`<tr data-code="${c.code}"${c.problem ? html` class="needs-mapping"` : ''}><td><code>${c.code}</code></td><td class="num">${c.seen}</td>
<td class="num">${value}</td><td>${ago(c.lastAt, now)}</td><td>${mapping}</td></tr>`;
}

/** The link to page `page` of an instrument's codes. */
export function codesHref(instrumentId: string, page: number): string {
  return `${paths.codes}?${new URLSearchParams({ instrument: instrumentId, page: String(page) }).toString()}`;
}

function pager(i: InstrumentCodesView): SafeHtml | string {
  if (i.pages <= 1) return '';
  const previous = i.page > 1 ? html`<a class="btn btn-secondary" rel="prev" href="${codesHref(i.instrumentId, i.page - 1)}">Previous page</a>` : '';
  const next = i.page < i.pages ? html`<a class="btn btn-secondary" rel="next" href="${codesHref(i.instrumentId, i.page + 1)}">Next page</a>` : '';
  return html`<nav class="row pager" data-codes-pager="${i.instrumentId}">${previous}<span>Page ${i.page} of ${i.pages}</span>${next}</nav>`;
}

/** One page of an instrument's codes, with the lines those needing a mapping need and the way to the other pages. */
export function instrumentCodes(i: InstrumentCodesView, now: number): SafeHtml {
  const needed = i.codes.filter((c) => c.problem !== null);
  const map = html`<p><a class="btn btn-primary" data-map="${i.instrumentId}" href="${paths.configureMapping}?${new URLSearchParams({ id: i.instrumentId }).toString()}">Map ${i.instrumentId}'s codes</a></p>`;
  const lines = needed.length
    ? html`${map}<p>Or, for an instrument in the main configuration file: under <code>mapping:</code> of <code>${i.instrumentId}</code>, add or replace these lines, fill in each LOINC, then reload:</p>
<pre class="yaml" data-mapping-lines="${i.instrumentId}">${yamlBlock(needed.map((c) => c.yaml))}</pre>`
    : html`<p class="note">Every code is mapped.</p>`;
  const first = (i.page - 1) * CODES_SHOWN + 1;
  const more =
    i.total > i.codes.length
      ? html`<p class="note" data-codes-listed="${i.codes.length}">Codes ${first}-${first + i.codes.length - 1} of the ${i.total} kept are listed: those needing a mapping first, then the most recently seen.</p>${pager(i)}`
      : '';
  return html`<article class="codes" data-codes="${i.instrumentId}"><h3>${i.instrumentId} <span class="count">${i.needMapping}</span> <small>need a mapping</small></h3>
${lines}<div class="scroll"><table><thead><tr><th>Code</th><th>Seen</th><th>Last value</th><th>Last</th><th>Mapping</th></tr></thead>
<tbody>${i.codes.map((c) => codeRow(c, now))}</tbody></table></div>${more}</article>`;
}

/** Every configured instrument's codes; nothing when none has sent a code yet. */
export function codesSection(s: StatusSnapshot): SafeHtml {
  if (!s.codesSeen) return html``;
  const body = s.codesSeen.length ? s.codesSeen.map((i) => instrumentCodes(i, s.now)) : html`<p class="empty">No analyzer codes seen yet.</p>`;
  return html`<section id="codes-seen"><h2>Codes seen</h2>${body}</section>`;
}
