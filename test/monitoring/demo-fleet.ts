// A fleet of one for the monitoring tests: `labgate demo --stay` (a real child process: the demo's analyzer, sinks,
// LIMS outage, crash and restart, host query) scraped every second by a real Prometheus (Debian's prometheus package,
// which .ci/run installs) with labgate's alerting rules loaded, as docs/monitoring.md sets one up.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { freePort } from '../e2e/harness.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PROMETHEUS = '/usr/bin/prometheus';

export interface DemoFleet {
  /** The demo gateway's /metrics. */
  metricsUrl: string;
  /** Prometheus's base URL (its HTTP API under /api/v1). */
  prometheusUrl: string;
  /** The gateway id the scrape configuration labels the demo with. */
  gateway: string;
  /** When Prometheus began scraping (epoch ms). */
  since: number;
  stop(): Promise<void>;
}

/** Starts the demo and a Prometheus scraping it; resolves once the demo's scenario is over and scraped. */
export async function startDemoFleet(): Promise<DemoFleet> {
  if (!existsSync(join(root, 'dist/src/commands/demo.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  if (!existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is missing: install Debian's prometheus package, as .ci/run does`);
  const dir = mkdtempSync(join(tmpdir(), 'labgate-fleet-'));
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const child of children.reverse()) await ended(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const demo = spawn(process.execPath, [join(root, 'bin/labgate.js'), 'demo', '--stay'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(demo);
    const said = transcript(demo);
    // The scenario names the status page as soon as the gateway listens; the restarted gateway keeps the port.
    const page = await said.until(/status page\s+(http:\/\/127\.0\.0\.1:\d+)\//);
    const gateway = 'demo-gw1';
    const port = await freePort();
    copyFileSync(join(root, 'monitoring/prometheus/labgate-rules.yml'), join(dir, 'labgate-rules.yml'));
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: ['labgate-rules.yml'],
      scrape_configs: [{ job_name: 'labgate', static_configs: [{ targets: [new URL(page[1]!).host], labels: { gateway } }] }],
    };
    writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
    const since = Date.now();
    const prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(prometheus);
    const prometheusUrl = `http://127.0.0.1:${port}`;
    await said.until(/the gateway keeps running/);
    // A few more scrapes of the restarted gateway at rest.
    await new Promise((r) => setTimeout(r, 4_000));
    const ready = await fetch(`${prometheusUrl}/-/ready`).catch((err: Error) => err);
    if (ready instanceof Error || !ready.ok) throw new Error(`Prometheus is not ready at ${prometheusUrl}`);
    return { metricsUrl: `${page[1]}/metrics`, prometheusUrl, gateway, since, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** What a child wrote, with a wait for a line; the child ending first is an error. */
function transcript(child: ChildProcess): { until: (pattern: RegExp) => Promise<RegExpExecArray> } {
  let out = '';
  const waiting: (() => void)[] = [];
  const onData = (d: string): void => {
    out += d;
    waiting.forEach((w) => w());
  };
  child.stdout!.setEncoding('utf8').on('data', onData);
  child.stderr!.setEncoding('utf8').on('data', onData);
  return {
    until: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(out);
          if (m) resolve(m);
        };
        waiting.push(check);
        check();
        child.once('exit', (code) => reject(new Error(`the demo ended (${code}) before ${pattern}:\n${out}`)));
      }),
  };
}

/** Ends a child with SIGTERM and waits for it. */
async function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exit;
}
