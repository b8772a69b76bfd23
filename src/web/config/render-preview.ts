// The preview of a change (what it does to the file, line by line, and what the reload will start, stop or restart),
// with the button that applies exactly it; the outcome once applied; and the page a second editor gets when the file
// changed under their form.
import type { DiffLine } from '../../config/line-diff.js';
import { html } from '../status/html.js';
import { paths } from '../status/paths.js';
import { relativeTime } from '../status/format.js';
import { configPage, diffBlock, hiddenForm, type ConfigPageContext } from './render-parts.js';
import type { ChangeView, Reprocessable } from './source.js';

/** The change shown before it is applied; `fields` are the posted form's, posted again by Apply. */
export function previewPage(ctx: ConfigPageContext, summary: string, plan: string, diff: readonly DiffLine[], fields: URLSearchParams): string {
  const hidden = Object.fromEntries([...fields].filter(([name]) => name !== 'csrf'));
  return configPage(
    ctx,
    'Preview',
    html`<h2>Preview: ${summary}</h2>
<p data-plan><strong>What the reload will do:</strong> ${plan}. Nothing else restarts.</p>
<p>The instruments file will change so:</p>${diffBlock(diff)}
<div class="row">${hiddenForm(paths.configureApply, ctx.csrf, hidden, 'Apply')}<a class="btn btn-secondary" href="${paths.configure}">Cancel</a></div>`,
  );
}

/** A change applied: what the reload did, and what to do next. */
export function appliedPage(ctx: ConfigPageContext, summary: string, reload: string, next: { id: string | null; reprocessable: Reprocessable | null }): string {
  const offer =
    next.id && next.reprocessable && next.reprocessable.captures > 0
      ? html`<section data-reprocess="${next.id}"><p>${next.reprocessable.captures} rejected message${next.reprocessable.captures === 1 ? '' : 's'} of ${next.id} now read as
${next.reprocessable.results} result${next.reprocessable.results === 1 ? '' : 's'} with this configuration.</p>
${hiddenForm(paths.configureReprocess, ctx.csrf, { id: next.id }, 'Reprocess them')}</section>`
      : '';
  const mapping = next.id
    ? html` <a class="btn btn-secondary" href="${paths.configureMapping}?${new URLSearchParams({ id: next.id }).toString()}">Codes and mapping of ${next.id}</a>`
    : '';
  return configPage(
    ctx,
    'Applied',
    html`<p class="flash" role="status" data-applied><strong>Applied: ${summary}.</strong> ${reload}.</p>${offer}
<p><a class="btn btn-secondary" href="${paths.page}">Status page</a>${mapping} <a href="${paths.configure}">Configure</a></p>`,
  );
}

/** The file changed since the form was opened: nothing was applied; who changed it, and the way back. */
export function changedPage(ctx: ConfigPageContext, latest: ChangeView | null, now: number, retry: string): string {
  const who = latest
    ? html` The last change: <strong>${latest.summary}</strong>, by ${latest.actor}, ${relativeTime(latest.at, now)}.`
    : ' It was changed outside this page (by hand).';
  return configPage(
    ctx,
    'Changed meanwhile',
    html`<p class="flash flash-error" role="alert" data-changed>Not applied: the configuration changed since you opened this form.${who}
Look at it as it is now, then make your change again.</p>${latest?.diff ? html`<pre class="diff">${latest.diff}</pre>` : ''}
<p><a class="btn btn-primary" href="${retry}">Open the form again</a> <a href="${paths.configure}">Configure</a></p>`,
  );
}

/** What reprocessing did. */
export function reprocessedPage(ctx: ConfigPageContext, id: string, r: Reprocessable & { stillRejected: number }): string {
  return configPage(
    ctx,
    'Reprocessed',
    html`<p class="flash" role="status" data-reprocessed><strong>${id}: ${r.captures} message${r.captures === 1 ? '' : 's'} reprocessed, ${r.results} result${r.results === 1 ? '' : 's'} stored.</strong>
${r.stillRejected ? ` ${r.stillRejected} still rejected (see Rejected messages on the status page).` : ''}</p>
<p><a class="btn btn-primary" href="${paths.page}#results">Recent results</a> <a href="${paths.configure}">Configure</a></p>`,
  );
}
