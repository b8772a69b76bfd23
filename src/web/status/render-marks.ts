// The two small marks every section uses: a verdict lamp and a relative time. Every value goes through `html`.
import { html, type SafeHtml } from './html.js';
import { isoTime, relativeTime, type Lamp } from './format.js';

/** A relative time the client script keeps current between updates. */
export function ago(at: number | null, now: number): SafeHtml {
  if (at === null) return html`<span class="never">never</span>`;
  return html`<time datetime="${isoTime(at)}" data-at="${at}">${relativeTime(at, now)}</time>`;
}

/** A coloured dot with its word, so the verdict does not depend on colour alone. */
export function lamp(verdict: Lamp, label: string): SafeHtml {
  return html`<span class="lamp lamp-${verdict}" data-lamp="${verdict}"><span class="dot" aria-hidden="true"></span>${label}</span>`;
}
