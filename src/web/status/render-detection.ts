// The card of an instrument whose serial settings are being detected: what was found, the lines to copy into the
// configuration (one tap selects them all), and what every setting tried showed.
import { html, type SafeHtml } from './html.js';
import { lamp } from './render-marks.js';
import type { DetectionView, InstrumentView } from './source.js';

const OUTCOME: Record<DetectionView['trials'][number]['outcome'], string> = { noise: 'noise', silence: 'silence', recognized: 'makes sense' };

/** The detection card of an instrument; `facts` are its port facts as the other cards show them. */
export function detectionCard(i: InstrumentView, d: DetectionView, facts: SafeHtml): SafeHtml {
  const found = d.state === 'found';
  const lampOf = i.state === 'connected' ? lamp('amber', found ? 'Settings found' : 'Detecting settings') : lamp('red', 'Waiting for device');
  const trials = d.trials.map((t) => html`<li><code>${t.setting}</code> ${OUTCOME[t.outcome]}: ${t.why}</li>`);
  return html`<article class="card card-${i.state === 'connected' ? 'amber' : 'red'} card-wide" id="instrument-${i.id}" data-instrument="${i.id}" data-detecting="${d.state}">
<h3>${i.id} ${lampOf}</h3>
${i.state === 'connected' ? '' : html`<p class="reason">${i.reason ?? ''}</p>`}
<p class="finding"><strong>${d.summary}</strong></p>
<p class="note">Listening only: nothing is answered, so the analyzer keeps its results until this instrument is configured.</p>
${
  found
    ? html`<p>In the entry of <code>${i.id}</code>, put these lines in place of <code>driver</code> and <code>transport</code>, then reload (<code>systemctl reload labgate</code>):</p>
<pre class="yaml" data-yaml>${yamlBlock(d.yaml)}</pre>`
    : ''
}
${d.note ? html`<p class="note">${d.note}</p>` : ''}
${trials.length ? html`<details><summary>Settings tried (${trials.length})</summary><ul class="reasons">${trials}</ul></details>` : ''}
<dl>${facts}</dl>
</article>`;
}

/** Configuration lines for a `<pre>`: each escaped (a control character shows as its code), joined by real newlines. */
export function yamlBlock(lines: readonly string[]): SafeHtml {
  return html`${lines.map((line, i) =>
    i === 0
      ? html`${line}`
      : html`
${line}`,
  )}`;
}
