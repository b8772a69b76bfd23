// The gateway's own troubles, above the instruments: a disk below its floor (every analyzer is refused until space is
// freed) and a wall clock that is not synchronised or just stepped. Nothing when all is well.
import { formatDuration } from '../../duration.js';
import { html, type SafeHtml } from './html.js';
import { ago } from './render-marks.js';
import type { StatusSnapshot } from './source.js';

/** The banners; empty when the disk accepts and the clock is synchronised and has not stepped lately. */
export function gatewaySection(s: StatusSnapshot): SafeHtml {
  const banners: SafeHtml[] = [];
  const { disk, clock } = s;
  if (disk && !disk.accepting) {
    banners.push(html`<p class="banner banner-red" data-disk="refusing"><strong>Not accepting results: the disk is full.</strong> ${disk.reason ?? ''}.
Analyzers are refused (NAK, AR) and keep their results; ingest resumes by itself once space is freed (a sink delivers and retention prunes, or a file is deleted).</p>`);
  }
  if (clock?.state === 'unsynchronised') {
    banners.push(html`<p class="banner banner-amber" data-clock="unsynchronised"><strong>Clock not synchronised</strong> (${clock.source}).
Receive times stamped now may be wrong and are marked so; results keep the analyzer's own time.</p>`);
  } else if (clock?.state === 'unknown') {
    banners.push(html`<p class="banner" data-clock="unknown">Clock synchronisation unknown (${clock.source}).</p>`);
  }
  if (clock?.lastStep && s.now - clock.lastStep.at < 86_400_000) {
    const way = clock.lastStep.stepMs < 0 ? 'back' : 'forward';
    banners.push(
      html`<p class="banner" data-clock-step="${way}">The clock stepped ${way} ${formatDuration(Math.round(Math.abs(clock.lastStep.stepMs) / 1000))} ${ago(clock.lastStep.at, s.now)}; waits and due times kept their length.</p>`,
    );
  }
  return banners.length ? html`<section id="gateway" class="gateway">${banners}</section>` : html``;
}
