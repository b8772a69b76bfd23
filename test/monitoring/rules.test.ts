// The alerting rules with the real tool: promtool (Debian's prometheus package; .ci/run installs it) checks them
// and runs their unit tests, and every alert has a test that shows it quiet and then firing.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

const dir = fileURLToPath(new URL('../../monitoring/prometheus/', import.meta.url));
const dashboardFile = fileURLToPath(new URL('../../monitoring/grafana/labgate-fleet.json', import.meta.url));
const run = promisify(execFile);

async function promtool(args: string[], cwd = dir): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { code: number | string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error("promtool not found: install Debian's prometheus package (apt-get install prometheus), as .ci/run does");
    return { code: Number(e.code), out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}
const rules = parse(readFileSync(join(dir, 'labgate-rules.yml'), 'utf8')) as { groups: { rules: { alert?: string }[] }[] };
const alerts = rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));
const tests = (parse(readFileSync(join(dir, 'labgate-rules.test.yml'), 'utf8')) as { tests: RuleTest[] }).tests;

describe('monitoring/prometheus: the alerting rules', () => {
  it('pass promtool check rules', async () => {
    const { code, out } = await promtool(['check', 'rules', 'labgate-rules.yml']);
    expect(out).toMatch(/SUCCESS: \d+ rules found/);
    expect(code, out).toBe(0);
  });

  it('pass their unit tests (promtool test rules)', async () => {
    const { code, out } = await promtool(['test', 'rules', 'labgate-rules.test.yml']);
    expect(out).toContain('SUCCESS');
    expect(code, out).toBe(0);
  });

  it('have, for every alert, a test where it is quiet and one where it fires', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(9);
    const checks = tests.flatMap((t) => t.alert_rule_test ?? []);
    const untested = alerts.filter(
      (a) => !checks.some((c) => c.alertname === a && c.exp_alerts.length > 0) || !checks.some((c) => c.alertname === a && c.exp_alerts.length === 0),
    );
    expect(untested).toEqual([]);
  });

  it('and the example Prometheus configuration that loads them pass promtool check config', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'labgate-prometheus-'));
    try {
      // The example names files on a Prometheus server; here they are beside it.
      const config = readFileSync(join(dir, 'prometheus.example.yml'), 'utf8')
        .replace('/etc/prometheus/labgate-token', join(scratch, 'labgate-token'))
        .replace('/etc/prometheus/labgate-gateways.yml', join(scratch, 'labgate-gateways.yml'));
      writeFileSync(join(scratch, 'prometheus.yml'), config);
      writeFileSync(join(scratch, 'labgate-token'), 'token\n');
      copyFileSync(join(dir, 'labgate-gateways.example.yml'), join(scratch, 'labgate-gateways.yml'));
      copyFileSync(join(dir, 'labgate-rules.yml'), join(scratch, 'labgate-rules.yml'));
      const { code, out } = await promtool(['check', 'config', 'prometheus.yml'], scratch);
      expect(out).toMatch(/SUCCESS: prometheus\.yml is valid prometheus config file syntax/);
      expect(out).toMatch(/SUCCESS: \d+ rules found/);
      expect(code, out).toBe(0);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('and every query of the Grafana dashboard are PromQL that promtool parses', async () => {
    const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
    // Grafana fills in its interval variable before Prometheus sees a query.
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr.replaceAll('$__rate_interval', '1m')));
    expect(exprs.length).toBeGreaterThan(20);
    const scratch = mkdtempSync(join(tmpdir(), 'labgate-dashboard-'));
    try {
      const asRules = { groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }] };
      writeFileSync(join(scratch, 'dashboard-rules.yml'), stringify(asRules));
      const { code, out } = await promtool(['check', 'rules', 'dashboard-rules.yml'], scratch);
      expect(out).toContain(`SUCCESS: ${exprs.length} rules found`);
      expect(code, out).toBe(0);
      writeFileSync(join(scratch, 'broken.yml'), stringify({ groups: [{ name: 'x', rules: [{ record: 'x:y', expr: 'sum by (gateway (up)' }] }] }));
      expect((await promtool(['check', 'rules', 'broken.yml'], scratch)).code).not.toBe(0);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('fail their unit tests when an alert fires later than its test says', async () => {
    const changed = readFileSync(join(dir, 'labgate-rules.yml'), 'utf8').replace(
      'expr: labgate_sink_dead > 0\n        for: 1m',
      'expr: labgate_sink_dead > 0\n        for: 5m',
    );
    expect(changed).toContain('for: 5m');
    const scratch = mkdtempSync(join(tmpdir(), 'labgate-rules-'));
    try {
      writeFileSync(join(scratch, 'labgate-rules.yml'), changed);
      copyFileSync(join(dir, 'labgate-rules.test.yml'), join(scratch, 'labgate-rules.test.yml'));
      const { code, out } = await promtool(['test', 'rules', 'labgate-rules.test.yml'], scratch);
      expect(code).not.toBe(0);
      expect(out).toContain('alertname: LabgateDeadLettersWaiting');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
