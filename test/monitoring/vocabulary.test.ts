// Every metric and label the dashboard and the alerting rules name is one a running gateway exports: `labgate demo
// --stay` (a real child process: the demo's analyzer, sinks, a crash and restart, a host query) is scraped over HTTP,
// and each query's names are looked up in what it served. Prometheus's own `up` and the scrape configuration's target
// labels (job, instance, gateway) are the only names from elsewhere. docs/monitoring.md lists the same metrics.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { promqlNames, templateLabels } from './promql-names.js';

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

let demo: ChildProcess | undefined;
let served: Exposition;

beforeAll(async () => {
  expect(existsSync(join(root, 'dist/src/commands/demo.js')), 'dist/ is missing: run `npm run build` first').toBe(true);
  const child = spawn(process.execPath, [join(root, 'bin/labgate.js'), 'demo', '--stay'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  demo = child;
  let out = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const page = /status page: (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (page && out.includes('the gateway keeps running')) resolve(page[1]!);
    });
    child.on('exit', (code) => reject(new Error(`the demo ended (${code}) before it stayed:\n${out}`)));
  });
  served = readExposition(await (await fetch(`${url}/metrics`)).text());
}, 240_000);

afterAll(async () => {
  if (!demo || demo.exitCode !== null) return;
  const exited = new Promise((resolve) => demo!.once('exit', resolve));
  demo.kill('SIGTERM');
  await exited;
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
