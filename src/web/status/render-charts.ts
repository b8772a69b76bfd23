// The day at a glance as small inline SVG charts, drawn on the server (no script): one per instrument (results per
// hour, the rejected ones stacked on top) and one per sink (its backlog as a step line above, deliveries per hour
// below). Sized by a viewBox, so each fills half the 800-pixel touchscreen with text about 12 pixels high; every bar
// has a title, and each chart an aria-label with its totals.
import { html, type SafeHtml } from './html.js';
import type { DayView, StatusSnapshot } from './source.js';

const W = 360;
const LEFT = 38;
const RIGHT = 6;
const SLOT = (W - LEFT - RIGHT) / 24;
const HOUR_MS = 3_600_000;

const n = (v: number): string => Math.round(v).toLocaleString('en-US');
const px = (v: number): string => v.toFixed(1);

/** The smallest 1, 2 or 5 times a power of ten at or above `v` (at least 2, so its half is a whole number): a scale's top. */
export function niceMax(v: number): number {
  if (v <= 2) return 2;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => v <= m) ?? 10 * p;
}

// Gridlines at 0, half and the top, labelled on the left.
function scale(top: number, height: number, max: number): SafeHtml {
  const lines = [0, 0.5, 1].map((f) => {
    const y = px(top + height - f * height);
    return html`<line class="grid" x1="${LEFT}" x2="${W - RIGHT}" y1="${y}" y2="${y}"/><text class="tick" x="${LEFT - 4}" y="${px(top + height - f * height + 4)}" text-anchor="end">${n(f * max)}</text>`;
  });
  return html`${lines}`;
}

// Hour labels every six hours, and `now` under the current hour.
function hourAxis(labels: readonly string[], y: number): SafeHtml {
  const ticks = labels.map((label, i) => {
    const last = i === labels.length - 1;
    if (!last && i % 6 !== 0) return '';
    return html`<text class="tick" x="${px(LEFT + (i + 0.5) * SLOT)}" y="${y}" text-anchor="middle">${last ? 'now' : `${label}:00`}</text>`;
  });
  return html`${ticks}`;
}

function bars(
  values: readonly number[],
  under: readonly number[] | null,
  top: number,
  height: number,
  max: number,
  cls: string,
  title: (i: number) => string,
): SafeHtml {
  const rects = values.map((v, i) => {
    if (v <= 0) return '';
    const base = under ? under[i]! : 0;
    const h = (v / max) * height;
    const y = top + height - ((base + v) / max) * height;
    return html`<rect class="${cls}" x="${px(LEFT + i * SLOT + 1)}" y="${px(y)}" width="${px(SLOT - 2)}" height="${px(Math.max(h, 1))}"><title>${title(i)}</title></rect>`;
  });
  return html`${rects}`;
}

function instrumentChart(day: DayView, i: DayView['instruments'][number]): SafeHtml {
  const total = i.results.reduce((a, b) => a + b, 0);
  const rejected = i.rejected.reduce((a, b) => a + b, 0);
  const max = niceMax(Math.max(...i.results.map((r, k) => r + i.rejected[k]!)));
  const title = (k: number): string => `${day.labels[k]}:00: ${n(i.results[k]!)} results${i.rejected[k] ? `, ${n(i.rejected[k]!)} rejected` : ''}`;
  const label = `${i.id}: ${n(total)} results and ${n(rejected)} rejected in 24 hours`;
  return html`<figure class="chart-card" data-chart-instrument="${i.id}"><figcaption><strong>${i.id}</strong> ${n(total)} results${rejected ? html`, <span class="rejected-text">${n(rejected)} rejected</span>` : ''}</figcaption>
<svg class="chart" viewBox="0 0 ${W} 114" role="img" aria-label="${label}">${scale(8, 84, max)}
${bars(i.results, null, 8, 84, max, 'bar', title)}${bars(i.rejected, i.results, 8, 84, max, 'bar bar-rejected', title)}${hourAxis(day.labels, 108)}</svg></figure>`;
}

// The backlog as a filled step line: level from each point to the next, up to now.
function backlogPath(day: DayView, points: readonly { at: number; pending: number }[], top: number, height: number, max: number): SafeHtml | string {
  if (points.length === 0) return '';
  const x = (at: number): number => LEFT + ((at - day.from) / HOUR_MS) * SLOT;
  const y = (v: number): number => top + height - (v / max) * height;
  let d = `M${px(x(points[0]!.at))},${px(y(points[0]!.pending))}`;
  for (const p of points.slice(1)) d += `H${px(x(p.at))}V${px(y(p.pending))}`;
  const area = `${d}V${px(top + height)}H${px(x(points[0]!.at))}Z`;
  return html`<path class="backlog-area" d="${area}"/><path class="backlog-line" d="${d}"/>`;
}

function sinkChart(day: DayView, s: DayView['sinks'][number]): SafeHtml {
  const delivered = s.delivered.reduce((a, b) => a + b, 0);
  const now = s.backlog.at(-1)?.pending ?? 0;
  const most = Math.max(0, ...s.backlog.map((p) => p.pending));
  const backlogMax = niceMax(most);
  const deliveredMax = niceMax(Math.max(...s.delivered));
  const title = (k: number): string => `${day.labels[k]}:00: ${n(s.delivered[k]!)} delivered`;
  const label = `${s.sink}: ${n(delivered)} delivered in 24 hours; backlog now ${n(now)}, at most ${n(most)}`;
  return html`<figure class="chart-card" data-chart-sink="${s.sink}"><figcaption><strong>${s.sink}</strong> ${n(delivered)} delivered; backlog now ${n(now)}${most > now ? `, at most ${n(most)}` : ''}</figcaption>
<svg class="chart" viewBox="0 0 ${W} 164" role="img" aria-label="${label}">
${scale(8, 50, backlogMax)}${backlogPath(day, s.backlog, 8, 50, backlogMax)}<text class="caption" x="${LEFT + 4}" y="20">backlog</text>
${scale(88, 50, deliveredMax)}${bars(s.delivered, null, 88, 50, deliveredMax, 'bar bar-delivered', title)}<text class="caption" x="${LEFT + 4}" y="100">delivered per hour</text>
${hourAxis(day.labels, 158)}</svg></figure>`;
}

/** The last 24 hours: a chart per instrument and per sink. */
export function daySection(s: StatusSnapshot): SafeHtml {
  const day = s.day;
  if (!day) return html``;
  const charts = [...day.instruments.map((i) => instrumentChart(day, i)), ...day.sinks.map((k) => sinkChart(day, k))];
  return html`<section id="day"><h2>The last 24 hours</h2>${charts.length ? html`<div class="charts">${charts}</div>` : html`<p class="empty">No instruments or sinks.</p>`}</section>`;
}
