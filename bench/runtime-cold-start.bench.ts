// Back up after a power cut: from exec of `labgate run` to the first ACK an analyzer gets (its ENQ answered), for a
// configuration of one ASTM instrument and one of sixteen (each on a socat pseudo-terminal, with PostgreSQL and the LIMS
// configured on ports nobody listens on, over a store that already exists), beside `node -e ''` on the same machine.
// Each analyzer sends ENQ every 10 ms from the moment of exec until one is answered. The figures are medians of ROUNDS
// starts; the gateway's CPU time until then is read from /proc beside them (steadier than the clock on a shared machine).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { SerialPort } from 'serialport';
import { sig, type BenchLine } from './line.js';
import { freePort, until } from './runtime.bench.js';

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['runtime.cold-start'];

const ROUNDS = 5;
const TARGET_SECONDS = 0.5;
const ENQ = 0x05;
const ACK = 0x06;
const EOT = 0x04;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Start {
  /** Seconds from exec to the first instrument's ACK, and to the last instrument's first ACK. */
  first: number;
  all: number;
  /** The gateway's CPU seconds (user + system) when the last first ACK came. */
  cpu: number;
}

/** Emits runtime.cold-start for one instrument, with sixteen beside it. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  if (spawnSync('socat', ['-V'], { stdio: 'ignore' }).status !== 0 || !existsSync('/proc/self/stat')) {
    emit({ bench: 'runtime.cold-start', value: 0, unit: 's', skipped: 'needs socat and /proc' });
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-cold-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const one = await configure(dir, 'one', 1, cleanups);
    const sixteen = await configure(dir, 'sixteen', 16, cleanups);
    // The first start of each makes its store; the measured ones start over a store that exists, as after a power cut.
    await coldStart(one);
    await coldStart(sixteen);
    const ones: Start[] = [];
    const sixteens: Start[] = [];
    const nodes: { seconds: number; cpu: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      nodes.push(nodeAlone());
      ones.push(await coldStart(one));
      sixteens.push(await coldStart(sixteen));
    }
    const nodeSeconds = median(nodes.map((n) => n.seconds));
    const value = median(ones.map((s) => s.all));
    emit({
      bench: 'runtime.cold-start',
      value: sig(value),
      unit: 's',
      what: 'exec of labgate run to the first ACK of an analyzer ENQ, one ASTM instrument on a socat pty, PostgreSQL and LIMS configured',
      target: TARGET_SECONDS,
      cpuSeconds: sig(median(ones.map((s) => s.cpu))),
      nodeAloneSeconds: sig(nodeSeconds),
      nodeAloneCpuSeconds: sig(median(nodes.map((n) => n.cpu))),
      ratioToNodeAlone: sig(value / nodeSeconds),
      sixteenInstruments: {
        firstAckSeconds: sig(median(sixteens.map((s) => s.first))),
        everyInstrumentSeconds: sig(median(sixteens.map((s) => s.all))),
        cpuSeconds: sig(median(sixteens.map((s) => s.cpu))),
      },
      runs: ones.map((s) => sig(s.all)),
      rounds: ROUNDS,
    });
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

interface Setup {
  config: string;
  analyzers: string[];
}

async function configure(dir: string, name: string, instruments: number, cleanups: (() => Promise<void> | void)[]): Promise<Setup> {
  const entries: string[] = [];
  const analyzers: string[] = [];
  for (let i = 0; i < instruments; i++) {
    const dev = join(dir, `${name}-dev${i}`);
    const analyzer = join(dir, `${name}-analyzer${i}`);
    const socat = spawn('socat', [`pty,raw,echo=0,link=${dev}`, `pty,raw,echo=0,link=${analyzer}`], { stdio: 'ignore' });
    cleanups.push(() => stop(socat));
    entries.push(
      `  - {id: chem${i}, driver: astm, timezone: UTC, transport: {kind: serial, path: ${JSON.stringify(dev)}, baudRate: 9600}, mapping: [{code: K, loinc: 2823-3, unit: mmol/L}]}`,
    );
    analyzers.push(analyzer);
  }
  await until(() => analyzers.every((a) => existsSync(a)), 10_000);
  const token = join(dir, 'lims-token');
  writeFileSync(token, 'bench-token\n');
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    `gateway: {id: bench-gw, dataDir: ${JSON.stringify(join(dir, name))}, http: {host: 127.0.0.1, port: ${await freePort()}}, logLevel: info}
instruments:
${entries.join('\n')}
sinks:
  postgres: {url: "postgres://labgate@127.0.0.1:${await freePort()}/lab", tls: {mode: disable}}
  lims: {baseUrl: "http://127.0.0.1:${await freePort()}", auth: {kind: static, tokenFile: ${JSON.stringify(token)}}}
`,
  );
  return { config, analyzers };
}

// Every analyzer asks (ENQ) every 10 ms from exec on; the time of each one's first ACK.
async function coldStart(setup: Setup): Promise<Start> {
  const ports = await Promise.all(setup.analyzers.map(openAnalyzer));
  const start = performance.now();
  const child = spawn(process.execPath, [join(root, 'bin', 'labgate.js'), 'run', '--config', setup.config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  try {
    const acked = await Promise.all(
      ports.map(async (port) => {
        let at: number | undefined;
        let cpu = 0;
        // The gateway's CPU is read the moment the ACK arrives: it goes on loading the sinks right after.
        port.on('data', (d: Buffer) => {
          if (at !== undefined || !d.includes(ACK)) return;
          at = performance.now();
          cpu = cpuSeconds(child.pid!);
        });
        while (at === undefined) {
          if (child.exitCode !== null) throw new Error(`labgate run exited ${child.exitCode}: ${stderr}`);
          if (performance.now() - start > 60_000) throw new Error('no ACK within 60 s');
          port.write(Buffer.from([ENQ]));
          await sleep(10);
        }
        port.write(Buffer.from([EOT]));
        return { seconds: (at - start) / 1000, cpu };
      }),
    );
    const seconds = acked.map((a) => a.seconds);
    return { first: Math.min(...seconds), all: Math.max(...seconds), cpu: Math.max(...acked.map((a) => a.cpu)) };
  } finally {
    await stop(child);
    await Promise.all(ports.map((p) => new Promise((resolve) => p.close(resolve))));
  }
}

function openAnalyzer(path: string): Promise<SerialPort> {
  return new Promise((resolve, reject) => {
    const port = new SerialPort({ path, baudRate: 9600 }, (err) => (err ? reject(err) : resolve(port)));
  });
}

// `node -e ''`, reporting the CPU time it used (getrusage covers the process from its exec).
function nodeAlone(): { seconds: number; cpu: number } {
  const start = performance.now();
  const done = spawnSync(process.execPath, ['-e', 'const u = process.cpuUsage(); process.stdout.write(String(u.user + u.system))'], { encoding: 'utf8' });
  return { seconds: (performance.now() - start) / 1000, cpu: Number(done.stdout) / 1e6 };
}

// utime + stime of a process (fields 14 and 15 of /proc/PID/stat, in clock ticks of 1/100 s).
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
