// The Grafana dashboard as Grafana reads it: the document conforms to Grafana's published dashboard schema
// (@grafana/schema, checked offline by the TypeScript compiler), and it provisions from a file: the provider and data
// source files have the shape Grafana's provisioning reads, the dashboard carries its own uid, asks for its data
// source through a variable (no import-time inputs), and every panel fits the 24-column grid and filters by gateway.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { dashboardSchemaProblems } from './dashboard-schema.js';

const grafana = fileURLToPath(new URL('../../monitoring/grafana/', import.meta.url));
const text = readFileSync(join(grafana, 'labgate-fleet.json'), 'utf8');

interface Target {
  refId: string;
  expr: string;
  datasource: { type: string; uid: string };
}
interface PanelDoc {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  multi?: boolean;
  includeAll?: boolean;
  current?: { value: string | string[] };
}
const dashboard = JSON.parse(text) as { uid: string; title: string; id?: number | null; panels: PanelDoc[]; templating: { list: Variable[] } } & Record<
  string,
  unknown
>;
const panels = dashboard.panels;
const queried = panels.filter((p) => p.type !== 'row');

describe("monitoring/grafana/labgate-fleet.json against Grafana's dashboard schema", () => {
  it('conforms, and a misspelt key, an unknown panel option or a value outside an enum would not', () => {
    const broken = (change: (d: { graphTooltip: number; panels: Record<string, unknown>[] }) => void): string => {
      const d = JSON.parse(text) as { graphTooltip: number; panels: Record<string, unknown>[] };
      change(d);
      return JSON.stringify(d, null, 2);
    };
    const stat = (d: { panels: Record<string, unknown>[] }): Record<string, unknown> => d.panels.find((p) => p['type'] === 'stat')!;
    const [problems, ...others] = dashboardSchemaProblems(
      text,
      broken((d) => (d.graphTooltip = 7)),
      broken((d) => (stat(d)['gridPoss'] = stat(d)['gridPos'])),
      broken((d) => ((stat(d)['options'] as Record<string, unknown>)['colourMode'] = 'background')),
    );
    expect(problems).toEqual([]);
    expect(others.map((o) => o.join('\n'))).toEqual([
      expect.stringContaining("Type '7' is not assignable"),
      expect.stringMatching(/'"gridPoss"' does not exist in type 'PanelOf<"stat"/),
      expect.stringMatching(/'"colourMode"' does not exist in type '{ colorMode/),
    ]);
  });
});

describe('provisioning the dashboard from a file', () => {
  const provider = parse(readFileSync(join(grafana, 'provisioning/dashboards/labgate.yaml'), 'utf8')) as {
    apiVersion: number;
    providers: { name: string; type: string; options: { path: string } }[];
  };
  const sources = parse(readFileSync(join(grafana, 'provisioning/datasources/prometheus.yaml'), 'utf8')) as {
    apiVersion: number;
    datasources: { name: string; type: string; uid: string; access: string; url: string }[];
  };

  it('has a file provider and a Prometheus data source in the shape Grafana provisioning reads', () => {
    expect(provider.apiVersion).toBe(1);
    expect(provider.providers).toEqual([
      expect.objectContaining({ name: 'labgate', type: 'file', options: expect.objectContaining({ path: expect.stringMatching(/^\//) }) }),
    ]);
    expect(sources.apiVersion).toBe(1);
    expect(sources.datasources).toEqual([
      expect.objectContaining({ type: 'prometheus', access: 'proxy', uid: expect.any(String), url: expect.stringMatching(/^http/) }),
    ]);
  });

  it('is a dashboard model with its own uid, no instance id and no import-time inputs', () => {
    expect(dashboard.uid).toMatch(/^[A-Za-z0-9_-]{8,40}$/);
    expect(dashboard.title).toBeTruthy();
    expect(dashboard.id ?? null).toBeNull();
    expect(Object.keys(dashboard).filter((k) => k.startsWith('__'))).toEqual([]);
  });

  it('asks for its Prometheus through a variable whose default is the provisioned data source, and filters every query by gateway', () => {
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(vars.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus', current: { value: sources.datasources[0]!.uid } });
    expect(vars.get('gateway')).toMatchObject({ type: 'query', multi: true, includeAll: true });
    for (const p of queried) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets!.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) {
        expect(t.datasource).toEqual(p.datasource);
        expect(t.expr, p.title).toContain('gateway=~"$gateway"');
      }
      expect(new Set(p.targets!.map((t) => t.refId)).size, p.title).toBe(p.targets!.length);
    }
  });

  it('lays its panels on the 24-column grid without overlap, each with its own id', () => {
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const cells = new Map<string, string>();
    for (const p of panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x >= 0 && w > 0 && x + w <= 24 && h > 0, p.title).toBe(true);
      for (let col = x; col < x + w; col++) {
        for (let row = y; row < y + h; row++) {
          const taken = cells.get(`${col},${row}`);
          expect(taken, `${p.title} overlaps ${taken}`).toBeUndefined();
          cells.set(`${col},${row}`, p.title);
        }
      }
    }
  });
});
