// `labgate run` as a real child process (node bin/labgate.js run --config FILE) with 16 instruments on socat
// pseudo-terminals (tcp-server listeners when socat is missing) and both sinks pointed at closed 127.0.0.1 ports:
// idle RSS and CPU, then start-to-ready time and RSS over a store holding 1,000,000 pending outbox rows.
// Memory and CPU are read from /proc (Linux only; elsewhere the figures are skipped).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../src/store/store.js';
import { sig, type BenchLine } from './line.js';
import { astmMessage } from './store-size.bench.js';

const INSTRUMENTS = 16;
const BACKLOG_RESULTS = 500_000;
const SINKS = ['postgres', 'lims'];
const IDLE_SECONDS = 10;
const IDLE_WINDOWS = 3;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type Emit = (line: BenchLine) => void;
type Gateway = Awaited<ReturnType<typeof startGateway>>;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = [
  'runtime.idle.rss',
  'runtime.idle.cpu',
  'runtime.backlog.ready',
  'runtime.backlog.rss',
  'runtime.backlog.cpu',
  'runtime.backlog.healthz',
];

/** Idle figures, then the backlog figures. */
export async function run(emit: Emit): Promise<void> {
  if (!existsSync('/proc/self/status')) return;
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-runtime-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const lines = await instrumentLines(dir, cleanups);
    const sinks = await deadSinks(dir);
    const common = { instruments: INSTRUMENTS, transport: lines.kind };

    const idle = await startGateway(dir, 'idle', lines.yaml, sinks, cleanups);
    const settledIdle = await settle(idle);
    const started = { readySeconds: sig(idle.readySeconds), startedSeconds: sig(idle.startedSeconds) };
    emit({ bench: 'runtime.idle.rss', value: settledIdle.rssMb, unit: 'MB', target: 100, ...settledIdle.rss, ...started, ...common });
    emit({ bench: 'runtime.idle.cpu', value: settledIdle.cpu, unit: '% of one core', target: 1, ...settledIdle.cpuContext, ...common });
    await stopGateway(idle.child);

    const built = buildBacklog(join(dir, 'backlog'));
    const backlog = await startGateway(dir, 'backlog', lines.yaml, sinks, cleanups);
    const healthz = await timeHealthz(backlog.port);
    const settledBacklog = await settle(backlog);
    const context = { pendingRows: built.pendingRows, storeMb: built.storeMb, ...common };
    emit({ bench: 'runtime.backlog.ready', value: sig(backlog.readySeconds), unit: 's', target: 2, startedSeconds: sig(backlog.startedSeconds), ...context });
    emit({ bench: 'runtime.backlog.rss', value: settledBacklog.rssMb, unit: 'MB', target: 100, ...settledBacklog.rss, ...context });
    emit({ bench: 'runtime.backlog.cpu', value: settledBacklog.cpu, unit: '% of one core', ...settledBacklog.cpuContext, ...context });
    emit({ bench: 'runtime.backlog.healthz', value: sig(healthz), unit: 'ms', pendingRows: built.pendingRows });
    await stopGateway(backlog.child);
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

// Start-up leaves work behind (V8's first full GC runs some 20 s in), so CPU is read in several windows and the
// median is the figure, and RSS is read after them; /healthz is asked between windows, as a monitor would.
async function settle(gateway: Gateway) {
  const pid = gateway.child.pid!;
  const readyMb = procMb(pid, 'VmRSS');
  await sleep(5000);
  const at5sMb = procMb(pid, 'VmRSS');
  const windows: number[] = [];
  for (let w = 0; w < IDLE_WINDOWS; w++) {
    windows.push(sig(await cpuPercent(pid, IDLE_SECONDS), 2));
    await timeHealthz(gateway.port);
  }
  const rss = { startedMb: sig(gateway.startedRssMb), readyMb: sig(readyMb), at5sMb: sig(at5sMb), peakMb: sig(procMb(pid, 'VmHWM')) };
  return {
    rssMb: sig(procMb(pid, 'VmRSS')),
    rss: { ...rss, afterSeconds: 5 + IDLE_WINDOWS * IDLE_SECONDS },
    cpu: [...windows].sort((a, b) => a - b)[Math.floor(IDLE_WINDOWS / 2)]!,
    cpuContext: { windowSeconds: IDLE_SECONDS, windows },
  };
}

interface Lines {
  kind: 'socat-pty' | 'tcp-server';
  yaml: string;
}

// One socat pty pair per instrument: labgate opens `dev`, nobody talks on `analyzer`: a plugged-in, silent analyzer.
async function instrumentLines(dir: string, cleanups: (() => Promise<void> | void)[]): Promise<Lines> {
  const socat = spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;
  const entries: string[] = [];
  for (let i = 0; i < INSTRUMENTS; i++) {
    let transport: string;
    if (socat) {
      const dev = join(dir, `dev${i}`);
      const child = spawn('socat', [`pty,raw,echo=0,link=${dev}`, `pty,raw,echo=0,link=${join(dir, `analyzer${i}`)}`], { stdio: 'ignore' });
      cleanups.push(() => stopChild(child));
      transport = `{kind: serial, path: ${JSON.stringify(dev)}, baudRate: 9600}`;
    } else {
      transport = `{kind: tcp-server, host: 127.0.0.1, port: ${await freePort()}}`;
    }
    entries.push(`  - {id: chem${i}, driver: astm, timezone: UTC, transport: ${transport}, mapping: [{code: K, loinc: 2823-3, unit: mmol/L}]}`);
  }
  if (socat) await until(() => [...Array(INSTRUMENTS).keys()].every((i) => existsSync(join(dir, `dev${i}`))), 10_000);
  return { kind: socat ? 'socat-pty' : 'tcp-server', yaml: `instruments:\n${entries.join('\n')}\n` };
}

// Both sinks configured, on ports nobody listens on: connections are refused, nothing drains, the circuits open.
async function deadSinks(dir: string): Promise<string> {
  const token = join(dir, 'lims-token');
  writeFileSync(token, 'bench-token\n');
  const [pg, lims] = [await freePort(), await freePort()];
  return `sinks:
  postgres: {url: "postgres://labgate@127.0.0.1:${pg}/lab", tls: {mode: disable}}
  lims: {baseUrl: "http://127.0.0.1:${lims}", auth: {kind: static, tokenFile: ${JSON.stringify(token)}}}
`;
}

// Started = the "gateway ready" log line (start() returned); ready = /healthz answers without "starting" after that.
/** Shared with the other benches that run `labgate run` as a child process. */
export async function startGateway(dir: string, name: string, instruments: string, sinks: string, cleanups: (() => Promise<void> | void)[]) {
  const port = await freePort();
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    `gateway: {id: bench-gw, dataDir: ${JSON.stringify(join(dir, name))}, http: {host: 127.0.0.1, port: ${port}}, logLevel: info}\n${instruments}${sinks}`,
  );
  const start = performance.now();
  const child = spawn(process.execPath, [join(root, 'bin', 'labgate.js'), 'run', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let startedAt: number | null = null;
  const collect = (d: Buffer): void => {
    output = (output + d.toString()).slice(-8000);
    if (startedAt === null && output.includes('"msg":"gateway ready"')) startedAt = performance.now();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  cleanups.push(() => stopChild(child));
  const alive = (): void => {
    if (child.exitCode !== null) throw new Error(`labgate run exited ${child.exitCode}: ${output}`);
  };
  await until(() => (alive(), startedAt !== null), 60_000);
  const startedRssMb = procMb(child.pid!, 'VmRSS');
  await until(async () => (alive(), ready(port)), 60_000);
  const readySeconds = (performance.now() - start) / 1000;
  return { child, port, readySeconds, startedSeconds: (startedAt! - start) / 1000, startedRssMb };
}

// Ready = /healthz answers and no longer reports start-up (degraded is fine: the sinks are down on purpose).
async function ready(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    const body = (await res.json()) as { reasons: string[] };
    return !body.reasons.some((r) => r.startsWith('starting'));
  } catch {
    return false;
  }
}

async function timeHealthz(port: number): Promise<number> {
  const start = performance.now();
  await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.text());
  return performance.now() - start;
}

// 500,000 results × 2 sinks through the real ingest (without fsync: setup only), all left pending.
function buildBacklog(dataDir: string): { pendingRows: number; storeMb: number } {
  let clock = Date.UTC(2026, 6, 1);
  const store = openStore({ dataDir, sinks: SINKS, now: () => clock });
  try {
    store.db.pragma('synchronous = OFF');
    const perMessage = astmMessage(0, clock).results.length;
    const ingestMany = store.db.transaction((from: number, to: number) => {
      for (let m = from; m < to; m++) {
        clock = Date.UTC(2026, 6, 1) + m * 1000;
        store.ingest(astmMessage(m, clock));
      }
    });
    const messages = BACKLOG_RESULTS / perMessage;
    for (let m = 0; m < messages; m += 1000) ingestMany(m, Math.min(messages, m + 1000));
    const pendingRows = store.db.prepare(`SELECT COUNT(*) FROM outbox WHERE state = 'pending'`).pluck().get() as number;
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const pages = store.db.pragma('page_count', { simple: true }) as number;
    const pageSize = store.db.pragma('page_size', { simple: true }) as number;
    return { pendingRows, storeMb: sig((pages * pageSize) / 1024 / 1024) };
  } finally {
    store.close();
  }
}

/** Shared with the other benches that run `labgate run` as a child process. */
export function procMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]) / 1024;
}

// utime + stime (fields 14 and 15 of /proc/PID/stat, in clock ticks) over `seconds`, as % of one core.
async function cpuPercent(pid: number, seconds: number): Promise<number> {
  const ticksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  const ticks = (): number => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const before = ticks();
  const start = performance.now();
  await sleep(seconds * 1000);
  const used = (ticks() - before) / ticksPerSecond;
  return (100 * used) / ((performance.now() - start) / 1000);
}

/** Shared with the other benches that run `labgate run` as a child process. */
export async function stopGateway(child: ChildProcess): Promise<void> {
  await stopChild(child);
  if (child.exitCode !== 0) throw new Error(`labgate run exited ${child.exitCode ?? child.signalCode} on SIGTERM`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Shared with the other benches that run `labgate run` as a child process. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Shared with the other benches that run `labgate run` as a child process. */
export async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error('timed out waiting');
    await sleep(20);
  }
}
