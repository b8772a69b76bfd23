// The read-only sections: instruments, sinks, recent results. Every value goes through `html`, so it is escaped.
import { html, type SafeHtml } from './html.js';
import { drainTime, instrumentLamp, sinkLamp, stateLabel } from './format.js';
import { ago, lamp } from './render-marks.js';
import { detectionCard } from './render-detection.js';
import { ordersFacts } from './render-orders.js';
import { paths } from './paths.js';
import type { InstrumentView, NewPortCard, ResultView, SinkView, StatusSnapshot } from './source.js';

function fact(label: string, value: SafeHtml | string | number, wide = false): SafeHtml {
  return html`<div class="fact${wide ? ' wide' : ''}"><dt>${label}</dt><dd>${value}</dd></div>`;
}

function instrumentCard(i: InstrumentView, now: number): SafeHtml {
  if (i.detection)
    return detectionCard(
      i,
      i.detection,
      html`${fact('Port', html`<code>${i.port}</code>`, true)}${fact('Since', ago(i.since, now))}${fact('Last byte', ago(i.lastByteAt, now))}`,
    );
  const verdict = instrumentLamp(i);
  return html`<article class="card card-${verdict}" id="instrument-${i.id}" data-instrument="${i.id}">
<h3>${i.id} ${lamp(verdict, stateLabel(i.state))}</h3>
${i.reason ? html`<p class="reason">${i.reason}</p>` : ''}
<dl>${fact('Port', html`<code>${i.port}</code>`, true)}${fact('Since', ago(i.since, now))}
${fact('Last byte', ago(i.lastByteAt, now))}${fact('Last message', ago(i.lastMessageAt, now))}
${i.state !== 'connected' && i.nextAttemptAt !== null ? fact('Next try', ago(i.nextAttemptAt, now)) : ''}
${fact('Messages today', i.messagesToday)}${fact('Results today', i.resultsToday)}
${fact('NAKs', i.naks)}${fact('Checksum errors', i.checksumErrors)}${fact('Rejected', i.rejected)}
${i.refusedConnections > 0 ? fact('Refused connections', i.refusedConnections) : ''}${i.orders ? ordersFacts(i.orders) : ''}${(i.lostMessages ?? 0) > 0 ? fact('Lost reports', i.lostMessages ?? 0) : ''}
${(i.refusedOverLimit ?? 0) > 0 ? fact('Rejected, refused over the limit', i.refusedOverLimit ?? 0) : ''}</dl>
</article>`;
}

function circuitText(s: SinkView, now: number): SafeHtml {
  if (s.circuit === 'delivering') return html`Delivering`;
  if (s.circuit === 'probing') return html`Paused, probing now`;
  return html`Paused, next probe ${ago(s.nextProbeAt, now)}`;
}

function sinkCard(s: SinkView, now: number): SafeHtml {
  const verdict = sinkLamp(s);
  return html`<article class="card card-${verdict}" id="sink-${s.sink}" data-sink="${s.sink}">
<h3>${s.sink} ${lamp(verdict, s.circuit === 'delivering' ? 'Delivering' : 'Paused')}</h3>
${s.reason ? html`<p class="reason">${s.reason}</p>` : ''}
<dl>${fact('Circuit', circuitText(s, now))}${fact('Pending', s.pending)}
${fact('Oldest pending', s.oldestPendingAt === null ? '-' : ago(s.oldestPendingAt, now))}
${fact('Delivered last hour', s.deliveredLastHour)}${fact('Dead letters', s.dead)}${fact('Conflicts', s.conflicts)}
${fact('Time to drain', drainTime(s.etaSeconds))}</dl>
</article>`;
}

/** One chip per instrument and sink, so a 7-inch screen shows every verdict above the fold. */
export function chips(s: StatusSnapshot): SafeHtml {
  const instruments = s.instruments.map((i) => html`<a class="chip" href="#instrument-${i.id}">${lamp(instrumentLamp(i), i.id)}</a>`);
  const sinks = s.sinks.map((k) => html`<a class="chip" href="#sink-${k.sink}">${lamp(sinkLamp(k), k.sink)}</a>`);
  return html`<nav class="chips" aria-label="At a glance">${instruments}${sinks}</nav>`;
}

// A port heard but not configured: what detection found, and the way to add it (the configuration page's form).
function newPortCard(p: NewPortCard): SafeHtml {
  const add = p.found
    ? html`<a class="btn btn-primary" href="${paths.configureAdd}?${new URLSearchParams({ port: p.path }).toString()}">Use these settings</a>`
    : '';
  return html`<article class="card card-amber card-wide" data-new-port="${p.path}" data-detecting="${p.found ? 'found' : 'searching'}">
<h3>New port ${lamp('amber', p.found ? 'Settings found' : 'Detecting settings')}</h3><p><code>${p.path}</code></p>
<p class="finding"><strong>${p.summary}</strong></p>${p.note ? html`<p class="note">${p.note}</p>` : ''}
<p class="note">Listening only: nothing is answered, so the analyzer keeps its results until it is added.</p>${add}</article>`;
}

/** Instruments as cards, then the ports heard but not configured. */
export function instrumentsSection(s: StatusSnapshot): SafeHtml {
  const none = s.instruments.length === 0 && !s.newPorts?.length;
  const body = none ? html`<p class="empty">No instruments configured.</p>` : s.instruments.map((i) => instrumentCard(i, s.now));
  return html`<section id="instruments"><h2>Instruments</h2><div class="cards">${body}${(s.newPorts ?? []).map(newPortCard)}</div></section>`;
}

/** Sinks as cards. */
export function sinksSection(s: StatusSnapshot): SafeHtml {
  const body = s.sinks.length ? s.sinks.map((k) => sinkCard(k, s.now)) : html`<p class="empty">No sinks enabled.</p>`;
  return html`<section id="sinks"><h2>Delivery</h2><div class="cards">${body}</div></section>`;
}

function resultRow(r: ResultView): SafeHtml {
  const delivery = r.delivery.map((d) => html`<span class="delivery delivery-${d.state}" data-sink="${d.sink}">${d.sink}: ${d.state}</span> `);
  return html`<tr data-key="${r.dedupKey}"><td>${r.accession}</td><td>${r.instrumentId}</td>
<td><code>${r.loinc}</code><br><small>${r.analyzerCode}</small></td><td class="num">${r.valueText} ${r.unit ?? ''}</td>
<td>${r.flags.join(' ')}${r.qc ? html` <span class="tag">QC</span>` : ''}</td><td>${r.status}</td>
<td><small>${r.resultedAt}</small></td><td>${delivery}</td></tr>`;
}

/** The most recent results with their delivery state per sink. */
export function resultsSection(s: StatusSnapshot): SafeHtml {
  const rows = s.recentResults.map(resultRow);
  const table = html`<div class="scroll"><table><thead><tr><th>Accession</th><th>Instrument</th><th>LOINC / code</th>
<th>Value</th><th>Flags</th><th>Status</th><th>Resulted (UTC)</th><th>Delivery</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  return html`<section id="results"><h2>Recent results</h2>${rows.length ? table : html`<p class="empty">No results yet.</p>`}</section>`;
}
