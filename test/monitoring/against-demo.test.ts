// The monitoring kit against a running gateway: `labgate demo --stay` scraped by a real Prometheus with labgate's
// rules (demo-fleet.ts). Every metric and label the dashboard and the rules name is one the gateway serves on
// /metrics (Prometheus's own `up` and the scrape configuration's target labels job, instance and gateway are the only
// names from elsewhere), docs/monitoring.md lists the same metrics, Prometheus evaluates every rule without an
// error, and every panel's queries return the demo's data; drawn in Chromium, that is docs/monitoring-dashboard.png
// (written only by `npm run screenshots`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { closeSharedBrowser, sharedBrowser } from '../web/chromium.js';
import { screenshot } from '../web/screenshots.js';
import { startDemoFleet, type DemoFleet } from './demo-fleet.js';
import { promqlNames, templateLabels } from './promql-names.js';
import { dashboardHtml, queryPanels, type GridPanel } from './render-dashboard.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const monitoring = join(root, 'monitoring');

/** Each exported sample name with the labels seen on it, and each family (# TYPE) with its type. */
interface Exposition {
  samples: Map<string, Set<string>>;
  families: Map<string, string>;
}

function readExposition(text: string): Exposition {
  const samples = new Map<string, Set<string>>();
  const families = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1]!, type[2]!);
    const sample = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!sample) continue;
    const labels = samples.get(sample[1]!) ?? new Set<string>();
    for (const m of (sample[2] ?? '').matchAll(/(\w+)="/g)) labels.add(m[1]!);
    samples.set(sample[1]!, labels);
  }
  return { samples, families };
}

/** An expression with the labels its legend or annotations name besides. */
interface Query {
  where: string;
  expr: string;
  alsoLabels: string[];
}

function dashboardQueries(): Query[] {
  const d = JSON.parse(readFileSync(join(monitoring, 'grafana/labgate-fleet.json'), 'utf8')) as {
    panels: { title: string; targets?: { expr: string; legendFormat?: string }[] }[];
    templating: { list: { name: string; type: string; query: string | { query: string } }[] };
  };
  const panels = d.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr, alsoLabels: templateLabels(t.legendFormat ?? '') })),
  );
  const variables = d.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => ({ where: `variable ${v.name}`, expr: typeof v.query === 'string' ? v.query : v.query.query, alsoLabels: [] }));
  return [...panels, ...variables];
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parse(readFileSync(join(monitoring, 'prometheus/labgate-rules.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

function ruleQueries(): Query[] {
  return rules.map((r) => ({
    where: r.alert ? `alert ${r.alert}` : `record ${r.record}`,
    expr: r.expr,
    alsoLabels: templateLabels(Object.values({ ...r.labels, ...r.annotations }).join('\n')),
  }));
}

/** Labels every series gets from the scrape configuration (labgate-gateways.example.yml), not from labgate. */
function targetLabels(): string[] {
  const groups = parse(readFileSync(join(monitoring, 'prometheus/labgate-gateways.example.yml'), 'utf8')) as { labels: Record<string, string> }[];
  return ['job', 'instance', ...new Set(groups.flatMap((g) => Object.keys(g.labels)))];
}

let fleet: DemoFleet;
let served: Exposition;

beforeAll(async () => {
  fleet = await startDemoFleet();
  served = readExposition(await (await fetch(fleet.metricsUrl)).text());
}, 240_000);

afterAll(async () => {
  await closeSharedBrowser();
  await fleet?.stop();
});

describe("the dashboard's and the rules' names against a running gateway's /metrics", () => {
  const recorded = new Map(rules.filter((r) => r.record).map((r) => [r.record!, r.expr]));
  const fromPrometheus = new Map([['up', new Set<string>()]]);

  /** The labels a metric carries: exported ones from its samples, a recorded one's from its expression. */
  const labelsOf = (metric: string): Set<string> | undefined => {
    const source = recorded.get(metric);
    if (source !== undefined) return new Set(promqlNames(source).metrics.flatMap((m) => [...(labelsOf(m) ?? [])]));
    return served.samples.get(metric) ?? fromPrometheus.get(metric);
  };

  it('serves a sample of every metric they name, with every label they name on it', () => {
    const target = targetLabels();
    expect(target).toContain('gateway');
    const queries = [...dashboardQueries(), ...ruleQueries()];
    expect(queries.length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const q of queries) {
      const names = promqlNames(q.expr);
      expect(names.metrics.length, `${q.where} names no metric`).toBeGreaterThan(0);
      const known = new Set(target);
      for (const metric of names.metrics) {
        const labels = labelsOf(metric);
        if (labels === undefined) problems.push(`${q.where}: metric ${metric} is not exported`);
        else labels.forEach((l) => known.add(l));
      }
      for (const label of [...names.labels, ...q.alsoLabels])
        if (!known.has(label)) problems.push(`${q.where}: label ${label} is on none of ${names.metrics.join(', ')}`);
    }
    expect(problems).toEqual([]);
  });

  it('would report a metric or a label labgate does not export', () => {
    const known = served.samples.get('labgate_sink_pending')!;
    expect(known.has('sink')).toBe(true);
    expect(served.samples.has('labgate_sink_backlog')).toBe(false);
    expect(known.has('instrument')).toBe(false);
    expect(promqlNames('sum by (gateway, instrument) (labgate_sink_backlog{sink=~"$sink"})')).toEqual({
      metrics: ['labgate_sink_backlog'],
      labels: ['sink', 'gateway', 'instrument'],
      functions: ['sum'],
    });
  });

  it('are all listed in docs/monitoring.md, which lists no metric labgate does not export', () => {
    const doc = readFileSync(join(root, 'docs/monitoring.md'), 'utf8');
    const documented = new Set([...doc.matchAll(/^\| `(labgate_\w+)` \|/gm)].map((m) => m[1]!));
    // prom-client's default process metrics are documented as one group, by their prefixes.
    const own = [...served.families.keys()].filter((f) => !/^labgate_(process|nodejs)_/.test(f));
    expect(own.length).toBeGreaterThan(30);
    expect(own.filter((f) => !documented.has(f))).toEqual([]);
    expect([...documented].filter((f) => !served.families.has(f))).toEqual([]);
    expect(doc).toContain('`labgate_process_`');
    expect(doc).toContain('`labgate_nodejs_`');
  });
});

describe('Prometheus scraping the demo, with the rules and the dashboard', () => {
  it('evaluates every rule of labgate-rules.yml without an error', async () => {
    const body = (await (await fetch(`${fleet.prometheusUrl}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string; health: string; lastError?: string; type: string }[] }[] };
    };
    const loaded = body.data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(rules.map((r) => r.alert ?? r.record).sort());
    expect(loaded.filter((r) => r.health === 'err' || r.lastError)).toEqual([]);
    expect(loaded.filter((r) => r.type === 'alerting').every((r) => r.health === 'ok')).toBe(true);
  });

  it("returns the demo's data for every panel, drawn as the dashboard lays it out", async () => {
    const d = JSON.parse(readFileSync(join(monitoring, 'grafana/labgate-fleet.json'), 'utf8')) as { title: string; panels: GridPanel[] };
    const end = Date.now();
    const data = await queryPanels(d.panels, fleet.prometheusUrl, fleet.since, end, 1);
    // Every query finds the demo's series (a quantile over a window with no answer in it is NaN, a gap, as in Grafana).
    expect(data.filter((p) => p.series.length === 0).map((p) => p.panel.title)).toEqual([]);
    expect(data.filter((p) => !p.series.some((s) => s.points.length > 0)).length).toBeLessThanOrEqual(1);
    // The demo's gateway, instrument and sinks are what the panels show.
    const names = data.flatMap((p) => p.series.map((s) => s.name)).join('\n');
    for (const shown of [`${fleet.gateway} chem1`, `${fleet.gateway} lims`, `${fleet.gateway} postgres`]) expect(names).toContain(shown);

    const page = await (await sharedBrowser()).newPage({ viewport: { width: 1600, height: 900 } });
    try {
      await page.setContent(dashboardHtml(d.title, d.panels, data, fleet.since, end));
      expect(await page.locator('.panel').count()).toBe(data.length);
      expect(await page.locator('.panel polyline').count()).toBeGreaterThan(10);
      await screenshot(page, 'monitoring-dashboard.png', { fullPage: true });
    } finally {
      await page.close();
    }
  });
});
