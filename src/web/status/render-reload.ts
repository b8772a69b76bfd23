// What the last configuration reload did: applied (and what), or refused with every problem and its path, and the
// changes only a restart applies. Shown above everything else until the next reload says otherwise.
import { html, type SafeHtml } from './html.js';
import { ago } from './render-marks.js';
import type { StatusSnapshot } from './source.js';

/** The reload banner; nothing before the first reload. */
export function reloadSection(s: StatusSnapshot): SafeHtml {
  const r = s.reload;
  if (!r) return html``;
  const refused = r.outcome === 'refused';
  const problems = r.problems.map((p) => html`<li><code>${p.path}</code>: ${p.message}</li>`);
  const more = (r.problemCount ?? 0) - r.problems.length;
  if (more > 0) problems.push(html`<li class="more" data-more-problems="${more}">and ${more} more (<code>labgate check-config</code> lists them all)</li>`);
  const waiting = r.waitingForRestart.length
    ? html`<p>Changed, but only a restart applies it (<code>systemctl restart labgate</code>): ${r.waitingForRestart.map((k, i) => html`${i ? ', ' : ''}<code>${k}</code>`)}.</p>`
    : '';
  return html`<section id="reload" class="reload reload-${refused ? 'refused' : 'applied'}" data-reload="${r.outcome}">
<p><strong>${refused ? 'Configuration not applied' : 'Configuration reloaded'}</strong> ${ago(r.at, s.now)}: ${r.summary}.</p>
${problems.length ? html`<ul class="reasons">${problems}</ul><p>Fix the file and reload again; nothing else changed.</p>` : ''}${waiting}</section>`;
}
