// The dashboard's own queries, run against Prometheus's HTTP API and drawn as a static page laid out by the panels'
// grid positions (Grafana's 24 columns, 30 px rows, its dark theme): how docs/monitoring-dashboard.png is made
// where no Grafana server can be installed (Debian packages none; npm has its libraries, not the server).

export interface GridPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; legendFormat?: string; refId: string }[];
  fieldConfig?: {
    defaults: {
      unit?: string;
      noValue?: string;
      mappings?: { type: string; options: Record<string, { text: string; color: string }> }[];
      thresholds?: { steps: { color: string; value: number | null }[] };
    };
  };
}

export interface Series {
  name: string;
  points: [number, number][];
}

/** One panel's series over [start, end]. */
export interface PanelData {
  panel: GridPanel;
  series: Series[];
}

/** Grafana's variables as the dashboard's defaults (All), and its rate interval at its default (a minute). */
export function substitute(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replace(/\$(gateway|instrument|sink)\b/g, '.*');
}

/** Runs every target of every panel as a range query. */
export async function queryPanels(panels: readonly GridPanel[], prometheusUrl: string, start: number, end: number, stepSeconds: number): Promise<PanelData[]> {
  const out: PanelData[] = [];
  for (const panel of panels.filter((p) => p.type !== 'row')) {
    const series: Series[] = [];
    for (const target of panel.targets ?? []) {
      const params = new URLSearchParams({ query: substitute(target.expr), start: String(start / 1000), end: String(end / 1000), step: String(stepSeconds) });
      const res = await fetch(`${prometheusUrl}/api/v1/query_range?${params}`);
      const body = (await res.json()) as { status: string; error?: string; data: { result: { metric: Record<string, string>; values: [number, string][] }[] } };
      if (body.status !== 'success') throw new Error(`${panel.title}: ${body.error ?? res.status}`);
      for (const r of body.data.result) {
        const name = (target.legendFormat ?? '').replace(/\{\{\s*(\w+)\s*\}\}/g, (_all, label: string) => r.metric[label] ?? '').trim();
        series.push({ name, points: r.values.map(([t, v]) => [t * 1000, Number(v)] as [number, number]).filter(([, v]) => Number.isFinite(v)) });
      }
    }
    out.push({ panel, series });
  }
  return out;
}

const COLORS: Record<string, string> = { green: '#73bf69', red: '#f2495c', orange: '#ff9830', blue: '#5794f2', yellow: '#fade2a' };
const PALETTE = ['#73bf69', '#f2cc0c', '#8ab8ff', '#ff780a', '#f2495c', '#5794f2', '#b877d9', '#705da0', '#37872d', '#fade2a'];
const ROW_PX = 30;
const WIDTH = 1600;
const colour = (name: string): string => COLORS[name] ?? name;

/** A value in the panel's unit, as Grafana shows it. */
export function formatValue(value: number, unit = 'short'): string {
  if (unit === 'bytes') {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = value;
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return `${v.toFixed(v < 10 && i > 0 ? 2 : i > 0 ? 1 : 0)} ${units[i]}`;
  }
  if (unit === 's' || unit === 'dtdurations') {
    if (value < 1) return `${(value * 1000).toFixed(0)} ms`;
    if (value < 60) return `${value.toFixed(unit === 's' ? 2 : 0)} s`;
    if (value < 3600) return `${Math.floor(value / 60)} min ${Math.round(value % 60)} s`;
    return `${Math.floor(value / 3600)} h ${Math.round((value % 3600) / 60)} min`;
  }
  const suffix = unit.startsWith('suffix:') ? unit.slice('suffix:'.length).trim() : '';
  const text = Math.abs(value) >= 1000 ? `${(value / 1000).toFixed(1)} k` : Number.isInteger(value) ? String(value) : value.toFixed(2);
  return `${text}${suffix ? ` ${suffix}` : ''}`;
}

function mapped(panel: GridPanel, value: number): { text: string; color: string } | undefined {
  for (const m of panel.fieldConfig?.defaults.mappings ?? []) if (m.type === 'value' && m.options[String(value)]) return m.options[String(value)];
  return undefined;
}

function thresholdColour(panel: GridPanel, value: number): string {
  let c = 'green';
  for (const step of panel.fieldConfig?.defaults.thresholds?.steps ?? []) if (step.value === null || value >= step.value) c = step.color;
  return colour(c);
}

const esc = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function timeseries(d: PanelData, w: number, h: number, start: number, end: number): string {
  const unit = d.panel.fieldConfig?.defaults.unit;
  const max = Math.max(1e-9, ...d.series.flatMap((s) => s.points.map(([, v]) => v)));
  const plotW = w - 70;
  const plotH = h - 40 - 18 * Math.min(3, Math.ceil(d.series.length / 3));
  const x = (t: number): number => 60 + ((t - start) / (end - start)) * plotW;
  const y = (v: number): number => 8 + plotH - (v / max) * plotH;
  const grid = [0, 0.5, 1].map(
    (f) =>
      `<line x1="60" x2="${60 + plotW}" y1="${y(max * f)}" y2="${y(max * f)}" stroke="#2c3235"/><text x="55" y="${y(max * f) + 4}" text-anchor="end">${esc(formatValue(max * f, unit))}</text>`,
  );
  const lines = d.series.map(
    (s, i) =>
      `<polyline fill="none" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="1.5" points="${s.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`,
  );
  const legend = d.series.map((s, i) => `<span class="key"><i style="background:${PALETTE[i % PALETTE.length]}"></i>${esc(s.name)}</span>`).join('');
  return `<svg width="${w}" height="${plotH + 16}">${grid.join('')}${lines.join('')}</svg><div class="legend">${legend}</div>`;
}

function stat(d: PanelData): string {
  if (d.series.length === 0) return `<div class="novalue">${esc(d.panel.fieldConfig?.defaults.noValue ?? 'No data')}</div>`;
  return `<div class="stats">${d.series
    .map((s) => {
      const last = s.points.at(-1)?.[1];
      if (last === undefined)
        return `<div class="stat" style="background:#22252b"><small>${esc(s.name)}</small><b>${esc(d.panel.fieldConfig?.defaults.noValue ?? '–')}</b></div>`;
      const m = mapped(d.panel, last);
      const text = m?.text ?? formatValue(last, d.panel.fieldConfig?.defaults.unit);
      return `<div class="stat" style="background:${m ? colour(m.color) : thresholdColour(d.panel, last)}"><small>${esc(s.name)}</small><b>${esc(text)}</b></div>`;
    })
    .join('')}</div>`;
}

function timeline(d: PanelData, w: number, start: number, end: number): string {
  const plotW = w - 180;
  const x = (t: number): number => ((t - start) / (end - start)) * plotW;
  return d.series
    .map((s) => {
      const bands = s.points.map(([t, v], i) => {
        const next = s.points[i + 1]?.[0] ?? t + 1000;
        const m = mapped(d.panel, v);
        return `<rect x="${x(t).toFixed(1)}" width="${Math.max(1, x(next) - x(t)).toFixed(1)}" height="22" fill="${colour(m?.color ?? 'blue')}"/>`;
      });
      const last = s.points.at(-1);
      const label = last ? (mapped(d.panel, last[1])?.text ?? String(last[1])) : '';
      return `<div class="lane"><span>${esc(s.name)}</span><svg width="${plotW}" height="22">${bands.join('')}<text x="${plotW - 6}" y="15" text-anchor="end" fill="#111">${esc(label)}</text></svg></div>`;
    })
    .join('');
}

/** The whole dashboard as one static page. */
export function dashboardHtml(title: string, panels: readonly GridPanel[], data: readonly PanelData[], start: number, end: number): string {
  const col = WIDTH / 24;
  const body = panels.map((p) => {
    const { x, y, w, h } = p.gridPos;
    const style = `left:${x * col + 4}px;top:${y * ROW_PX + 52}px;width:${w * col - 8}px;height:${h * ROW_PX - 8}px`;
    if (p.type === 'row') return `<div class="row" style="${style}">${esc(p.title)}</div>`;
    const d = data.find((e) => e.panel.id === p.id)!;
    const inner =
      p.type === 'timeseries' ? timeseries(d, w * col - 24, h * ROW_PX - 44, start, end) : p.type === 'stat' ? stat(d) : timeline(d, w * col - 24, start, end);
    return `<div class="panel" data-panel="${p.id}" style="${style}"><h3>${esc(p.title)}</h3>${inner}</div>`;
  });
  const bottom = Math.max(...panels.map((p) => (p.gridPos.y + p.gridPos.h) * ROW_PX)) + 60;
  const when = `${new Date(start).toISOString().slice(11, 19)} to ${new Date(end).toISOString().slice(11, 19)} UTC`;
  return `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;background:#111217;color:#ccccdc;font:12px Inter,Helvetica,Arial,sans-serif;width:${WIDTH}px;height:${bottom}px;position:relative}
header{position:absolute;left:8px;top:10px;font-size:17px;color:#fff}header small{color:#8e8e8e;font-size:12px;margin-left:12px}
.panel{position:absolute;background:#181b1f;border:1px solid #2c3235;border-radius:3px;padding:6px 8px;box-sizing:border-box;overflow:hidden}
.panel h3{margin:0 0 6px;font-size:13px;font-weight:500;color:#d8d9da}.row{position:absolute;font-size:15px;color:#fff;padding-top:6px}
svg text{fill:#8e8e8e;font-size:10px}.legend{display:flex;flex-wrap:wrap;gap:2px 12px;font-size:11px}.key i{display:inline-block;width:12px;height:3px;margin-right:5px;vertical-align:middle}
.stats{display:flex;flex-wrap:wrap;gap:4px}.stat{flex:1 1 45%;padding:6px 8px;border-radius:2px;color:#fff}.stat small{display:block;font-size:11px;opacity:.9}.stat b{font-size:20px}
.novalue{color:#8e8e8e;font-size:18px;padding-top:20px;text-align:center}.lane{display:flex;align-items:center;gap:8px;margin:3px 0}.lane span{width:160px;font-size:11px;text-align:right}
</style></head><body><header>${esc(title)}<small>gateway: All · instrument: All · sink: All · ${esc(when)}</small></header>${body.join('')}</body></html>`;
}
