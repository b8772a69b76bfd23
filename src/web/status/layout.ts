// The frame of every document, and the two documents the guard answers with (log in, refused). Kept apart from the
// page's renderers: the guard is built at start, the renderers on the first request for a page (gateway/web.ts).
import { html, type SafeHtml } from './html.js';
import { paths } from './paths.js';

// Only the status and configuration pages load the script: before login it would be refused anyway.
/** A whole document around `body`, with the stylesheet and, when asked, the page's script. */
export function layout(title: string, body: SafeHtml, script = false): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<link rel="stylesheet" href="${paths.css}">${script ? html`<script src="${paths.js}" defer></script>` : ''}</head>
<body>${body}</body></html>
`.value;
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
