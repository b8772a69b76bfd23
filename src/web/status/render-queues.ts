// The work queues: dead letters, conflicts, rejected captures, each with plain POST forms (they work without
// JavaScript) carrying the session's CSRF token. Every value goes through `html`, so it is escaped.
import { html, type SafeHtml } from './html.js';
import { paths } from './paths.js';
import { ago } from './render-marks.js';
import type { ConflictView, DeadLetterView, RejectedCaptureView, ResultFields, StatusSnapshot } from './source.js';

type Fields = Record<string, string>;

/** A POST form with the CSRF token and hidden fields; one button. */
export function actionForm(action: string, csrf: string, fields: Fields, label: string, kind = 'primary', confirm?: string): SafeHtml {
  const hidden = Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<form method="post" action="${action}" class="action"${confirm ? html` data-confirm="${confirm}"` : ''}><input type="hidden" name="csrf" value="${csrf}">${hidden}<button type="submit" class="btn btn-${kind}">${label}</button></form>`;
}

function deadLetterRow(d: DeadLetterView, csrf: string, now: number): SafeHtml {
  const retry = actionForm(paths.retryDeadLetter, csrf, { sink: d.sink, key: d.dedupKey }, 'Retry');
  return html`<tr data-dead-letter="${d.dedupKey}"><td>${d.sink}</td><td>${d.accession ?? '-'}</td><td><code>${d.loinc ?? '-'}</code></td>
<td class="reason">${d.reason}</td><td class="num">${d.attempts}</td><td>${ago(d.failedAt, now)}</td><td>${retry}</td></tr>`;
}

function deadLetters(s: StatusSnapshot, csrf: string): SafeHtml {
  if (s.deadLetters.length === 0) return html`<p class="empty">No dead letters.</p>`;
  const sinks = [...new Set(s.deadLetters.map((d) => d.sink))];
  const all = sinks.map((sink) =>
    actionForm(paths.retryDeadLetter, csrf, { sink, all: '1' }, `Retry all for ${sink}`, 'secondary', `Queue every dead letter of ${sink} again?`),
  );
  return html`<div class="scroll"><table><thead><tr><th>Sink</th><th>Accession</th><th>LOINC</th><th>Reason</th><th>Attempts</th>
<th>Failed</th><th></th></tr></thead><tbody>${s.deadLetters.map((d) => deadLetterRow(d, csrf, s.now))}</tbody></table></div>
<div class="row">${all}</div>`;
}

const VERSION_FIELDS: [string, (r: ResultFields) => string][] = [
  ['Accession', (r) => r.accession],
  ['Instrument', (r) => r.instrumentId],
  ['LOINC', (r) => r.loinc],
  ['Analyzer code', (r) => r.analyzerCode],
  ['Value', (r) => `${r.valueText} ${r.unit ?? ''}`.trim()],
  ['Flags', (r) => r.flags.join(' ')],
  ['Status', (r) => r.status],
  ['Resulted (UTC)', (r) => r.resultedAt],
  ['Reference range', (r) => r.referenceRange ?? ''],
  ['QC', (r) => (r.qc ? 'yes' : 'no')],
];

function versions(c: ConflictView): SafeHtml {
  const rows = VERSION_FIELDS.map(([label, get]) => {
    const stored = c.stored ? get(c.stored) : '(unreadable)';
    const incoming = c.incoming ? get(c.incoming) : '(unreadable)';
    return html`<tr class="${stored === incoming ? '' : 'differs'}"><th>${label}</th><td>${stored}</td><td>${incoming}</td></tr>`;
  });
  return html`<table class="versions"><thead><tr><th></th><th>Stored</th><th>New</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function conflictCard(c: ConflictView, csrf: string, now: number): SafeHtml {
  const id = String(c.id);
  return html`<article class="conflict" data-conflict="${id}"><h3>Conflict ${id} <small>from ${c.origin}, ${ago(c.detectedAt, now)}, seen ${c.occurrences}×</small></h3>
<p class="reason">${c.reason}</p><div class="scroll">${versions(c)}</div><div class="row">
${actionForm(paths.resolveConflict, csrf, { id, choice: 'keep' }, 'Keep stored', 'secondary')}
${actionForm(paths.resolveConflict, csrf, { id, choice: 'forward' }, 'Forward new as correction', 'primary', `Send the new version of ${c.stored?.accession ?? 'this result'} to the sinks as a correction?`)}</div></article>`;
}

function rejectedRow(r: RejectedCaptureView, csrf: string, now: number): SafeHtml {
  const reasons = r.reasons.map(
    (x) =>
      html`<li>${x.reason}${x.analyzerCode ? html` <small>(code ${x.analyzerCode})</small>` : ''}${x.accession ? html` <small>accession ${x.accession}</small>` : ''}</li>`,
  );
  const more = (r.reasonCount ?? 0) - r.reasons.length;
  if (more > 0) reasons.push(html`<li class="more" data-more-reasons="${more}">and ${more} more</li>`);
  const reprocess = actionForm(paths.reprocessCapture, csrf, { id: String(r.id) }, 'Reprocess');
  return html`<tr data-capture="${String(r.id)}"><td class="num">${r.id}</td><td>${r.instrumentId}</td><td>${r.protocol}</td><td>${ago(r.receivedAt, now)}</td>
<td><ul class="reasons">${reasons}</ul></td><td>${reprocess}</td></tr>`;
}

function rejectedBound(s: StatusSnapshot): SafeHtml | string {
  const bound = s.rejectedRetention;
  if (!bound) return '';
  const pruned = bound.prunedSinceStart > 0 ? html` ${bound.prunedSinceStart} older ones were pruned since the gateway started.` : '';
  return html`<p class="note" data-rejected-bound="${bound.keptMb}">The newest ${bound.keptMb} MB of rejected messages are kept for reprocessing; older ones are pruned.${pruned}</p>`;
}

function rejectedCaptures(s: StatusSnapshot, csrf: string): SafeHtml {
  if (s.rejectedCaptures.length === 0) return html`<p class="empty">No rejected messages.</p>${rejectedBound(s)}`;
  return html`${rejectedBound(s)}<div class="scroll"><table><thead><tr><th>Capture</th><th>Instrument</th><th>Protocol</th><th>Received</th><th>Why</th><th></th></tr></thead>
<tbody>${s.rejectedCaptures.map((r) => rejectedRow(r, csrf, s.now))}</tbody></table></div>`;
}

// A queue's heading counts all it holds; below it, when the list is shorter, how many are listed and which.
function heading(title: string, listed: number, total: number | undefined): SafeHtml {
  const all = Math.max(total ?? listed, listed);
  const note =
    all > listed ? html`<p class="note" data-listed="${listed}">The oldest ${listed} of ${all} are listed; the others follow as these are dealt with.</p>` : '';
  return html`<h2>${title} <span class="count">${all}</span></h2>${note}`;
}

/** The three work queues with their counts in the headings. */
export function queuesSection(s: StatusSnapshot, csrf: string): SafeHtml {
  const conflicts = s.conflicts.length ? s.conflicts.map((c) => conflictCard(c, csrf, s.now)) : html`<p class="empty">No conflicts.</p>`;
  const totals = s.queueTotals;
  return html`<section id="dead-letters">${heading('Dead letters', s.deadLetters.length, totals?.deadLetters)}${deadLetters(s, csrf)}</section>
<section id="conflicts">${heading('Conflicts', s.conflicts.length, totals?.conflicts)}${conflicts}</section>
<section id="rejected">${heading('Rejected messages', s.rejectedCaptures.length, totals?.rejectedCaptures)}${rejectedCaptures(s, csrf)}</section>`;
}
