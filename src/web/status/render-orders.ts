// A two-way instrument's day on its card: host queries, answers with orders, "no information" answers and why,
// answers that never reached the analyzer, downloads. Counts and reasons only: never a specimen or a patient.
import { html, type SafeHtml } from './html.js';
import type { OrdersToday } from './source.js';

/** The reasons of a "no information" answer in the technician's words. */
const REASONS: Record<string, string> = {
  'no-orders': 'no orders',
  'not-expressible': 'orders for other instruments only',
  'lims-timeout': 'LIMS too slow',
  'lims-unavailable': 'LIMS unavailable',
  'lims-error': 'LIMS error',
  'unsupported-request': 'asked for results',
};

function fact(label: string, value: SafeHtml | string | number): SafeHtml {
  return html`<div class="fact"><dt>${label}</dt><dd>${value}</dd></div>`;
}

/** The day's two-way figures as facts of the instrument's card. */
export function ordersFacts(o: OrdersToday): SafeHtml {
  const none = o.noInformation.reduce((n, r) => n + r.count, 0);
  const why = o.noInformation.map((r) => `${REASONS[r.reason] ?? r.reason} ${r.count}`).join(', ');
  return html`${fact('Queries today', o.queries)}${fact('Answered with orders', o.answeredWithOrders)}
${fact('Answered "no information"', none > 0 ? html`${none} <small data-reasons>(${why})</small>` : 0)}
${o.answersFailed > 0 ? fact('Answers not delivered', o.answersFailed) : ''}${fact('Downloads sent', o.downloads)}`;
}
