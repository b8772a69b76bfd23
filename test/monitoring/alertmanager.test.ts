// The example Alertmanager routing with the real tool: amtool (Debian's prometheus-alertmanager package; .ci/run
// installs it) checks the file and resolves each labgate alert, with its own labels, to the receiver docs/monitoring.md
// says it reaches.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const config = fileURLToPath(new URL('../../monitoring/alertmanager/alertmanager.example.yml', import.meta.url));
const rulesFile = fileURLToPath(new URL('../../monitoring/prometheus/labgate-rules.yml', import.meta.url));
const run = promisify(execFile);

async function amtool(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('amtool', args);
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number | string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error("amtool not found: install Debian's prometheus-alertmanager package, as .ci/run does");
    return { code: Number(e.code), out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

const alerts = (parse(readFileSync(rulesFile, 'utf8')) as { groups: { rules: { alert?: string; labels?: Record<string, string> }[] }[] }).groups
  .flatMap((g) => g.rules)
  .filter((r) => r.alert);

/** Where each alert should go: critical pages IT, dead letters and conflicts go to laboratory informatics. */
function receiverOf(alert: { alert?: string; labels?: Record<string, string> }): string {
  if (alert.labels?.['severity'] === 'critical') return 'lab-it-pager';
  if (/DeadLetters|Conflicts/.test(alert.alert!)) return 'lab-informatics-mail';
  return 'lab-it-mail';
}

describe('monitoring/alertmanager/alertmanager.example.yml', () => {
  it('passes amtool check-config', async () => {
    const { code, out } = await amtool(['check-config', config]);
    expect(out).toContain('SUCCESS');
    expect(code, out).toBe(0);
  });

  it('routes every labgate alert, with its labels, to its receiver', async () => {
    expect(alerts.length).toBeGreaterThanOrEqual(9);
    for (const alert of alerts) {
      const labels = Object.entries({ ...alert.labels, alertname: alert.alert!, gateway: 'lab1-gw1' }).map(([k, v]) => `${k}=${v}`);
      const { code, out } = await amtool(['config', 'routes', 'test', `--config.file=${config}`, `--verify.receivers=${receiverOf(alert)}`, ...labels]);
      expect(code, `${alert.alert}: ${out}`).toBe(0);
    }
    const wrong = await amtool(['config', 'routes', 'test', `--config.file=${config}`, '--verify.receivers=lab-it-mail', 'severity=critical']);
    expect(wrong.code).not.toBe(0);
  });
});
