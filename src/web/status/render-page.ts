// Whole documents: the status page and its live fragment (layout.ts has the frame and the pages the guard answers with).
import { html, type SafeHtml } from './html.js';
import { layout } from './layout.js';
import { overallLamp, redItems } from './format.js';
import { paths } from './paths.js';
import { daySection } from './render-charts.js';
import { codesSection } from './render-codes.js';
import { gatewaySection } from './render-gateway.js';
import { reloadSection } from './render-reload.js';
import { actionForm, queuesSection } from './render-queues.js';
import { ago, lamp } from './render-marks.js';
import { chips, instrumentsSection, resultsSection, sinksSection } from './render-status.js';
import type { StatusSnapshot } from './source.js';

/** Per-request facts the page needs besides the snapshot. */
export interface PageContext {
  csrf: string;
  /** The outcome of the action just taken, shown once. */
  flash: { text: string; ok: boolean } | null;
  /** True on a token-protected listener: offers "log out". */
  loggedIn: boolean;
}

const HEADLINE: Record<'green' | 'amber', string> = {
  green: 'All instruments talking, results leaving the box',
  amber: 'Working, but something needs a person',
};

/** What the client script swaps in on every update: the headline and every section. */
export function liveFragment(s: StatusSnapshot, csrf: string): SafeHtml {
  const verdict = overallLamp(s);
  const headline = verdict === 'red' ? `Attention: ${redItems(s).join(', ')}` : HEADLINE[verdict];
  return html`<section id="summary" class="summary summary-${verdict}">${lamp(verdict, headline)}
<span class="updated">Updated ${ago(s.now, s.now)}</span></section>
${gatewaySection(s)}${reloadSection(s)}${chips(s)}${instrumentsSection(s)}${sinksSection(s)}${daySection(s)}${queuesSection(s, csrf)}${codesSection(s)}${resultsSection(s)}`;
}

/** The status page. */
export function statusPage(s: StatusSnapshot, ctx: PageContext): string {
  const logout = ctx.loggedIn ? actionForm(paths.logout, ctx.csrf, {}, 'Log out', 'secondary') : '';
  const flash = ctx.flash === null ? '' : html`<p class="flash${ctx.flash.ok ? '' : ' flash-error'}" role="status">${ctx.flash.text}</p>`;
  return layout(
    `labgate ${s.gatewayId}`,
    html`<header class="top"><h1>labgate <small>${s.gatewayId}</small></h1><nav class="top-links"><a href="${paths.configure}">Configure</a>${logout}</nav></header>${flash}
<main id="live" data-now="${s.now}" data-fragment="${paths.fragment}">${liveFragment(s, ctx.csrf)}</main>
<footer><a href="${paths.page}">Refresh</a> · <a href="${paths.json}">JSON</a></footer>`,
    true,
  );
}
