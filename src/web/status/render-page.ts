// Whole documents: the status page, its live fragment, the login page and the refusal page.
import { html, type SafeHtml } from './html.js';
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

// Only the status and configuration pages load the script: before login it would be refused anyway.
/** A whole document around `body`, with the stylesheet and, when asked, the page's script. */
export function layout(title: string, body: SafeHtml, script = false): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<link rel="stylesheet" href="${paths.css}">${script ? html`<script src="${paths.js}" defer></script>` : ''}</head>
<body>${body}</body></html>
`.value;
}

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

/** The login form, with why the last attempt failed. The token is never echoed back. */
export function loginPage(problem: string | null): string {
  return layout(
    'labgate: log in',
    html`<main class="login"><h1>labgate</h1><p>This gateway's status page needs its access token (ask the administrator;
it is in the file named by <code>gateway.http.tokenFile</code>). You log in once per browser.</p>
${problem === null ? '' : html`<p class="flash flash-error" role="alert">${problem}</p>`}
<form method="post" action="${paths.login}"><label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit" class="btn btn-primary">Log in</button></form></main>`,
  );
}

/** A refusal a person can act on (stale form, foreign origin). */
export function refusalPage(message: string): string {
  return layout(
    'labgate: refused',
    html`<main class="login"><h1>Not done</h1><p class="flash flash-error" role="alert">${message}</p>
<p><a href="${paths.page}">Back to the status page</a></p></main>`,
  );
}
