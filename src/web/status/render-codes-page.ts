// The page of an instrument's codes past the first (the status page shows the first): the same article, its pager,
// and the way back; and the answer when there is no such page. Read-only: no form, no script.
import { html } from './html.js';
import { paths } from './paths.js';
import { instrumentCodes } from './render-codes.js';
import { layout } from './layout.js';
import type { CodesPageOutcome } from './source.js';

const back = html`<a href="${paths.page}#codes-seen">Status page</a>`;

/** Page `codes.page` of one instrument's codes. */
export function codesPageDocument(p: Extract<CodesPageOutcome, { kind: 'page' }>): string {
  const { codes } = p;
  const body = codes.total === 0 ? html`<p class="empty">No analyzer codes seen from ${codes.instrumentId} yet.</p>` : instrumentCodes(codes, p.now);
  return layout(
    `labgate ${p.gatewayId}: codes of ${codes.instrumentId}, page ${codes.page}`,
    html`<header class="top"><h1>labgate <small>${p.gatewayId}</small></h1><nav class="top-links">${back}<a href="${paths.configure}">Configure</a></nav></header>
<main><section id="codes-seen"><h2>Codes seen</h2>${body}</section></main>`,
  );
}

/** No such instrument or page: why, and the way back. */
export function codesMissingDocument(message: string): string {
  return layout(
    'labgate: not found',
    html`<main class="login"><h1>Not found</h1><p class="flash flash-error" role="alert">${message}</p><p>${back}</p></main>`,
  );
}
