// End-to-end harness: the real `labgate run` as a child process (the compiled dist/, built by `npm test`'s
// pretest) with a configuration written per test, socat pseudo-terminal "cables" and the LIMS test server as its
// own child process. What the tests look at lives beside it: store-view.ts (the gateway's SQLite store), central.ts
// (PostgreSQL and the LIMS), analyzers.ts (the far ends of the cables). socat is required: without it these tests
// fail, never skip.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { basename, delimiter, dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SerialPort } from 'serialport';
import type { HealthReport } from '../../src/web/health.js';
import { SerialTransport } from '../../src/transport/serial.js';

// The repository, from the source (vitest) or from the compiled copy under dist/ (the soak, bench/soak).
const above = fileURLToPath(new URL('../../', import.meta.url));
export const repoRoot = basename(above) === 'dist' ? dirname(above) : above;
const bin = join(repoRoot, 'bin/labgate.js');
const withFaults = join(repoRoot, 'dist/test/support/run-with-faults.js');
const limsMain = join(repoRoot, 'dist/src/lims-server/main.js');

/** The socat binary on PATH; throws (the test fails) when it is missing. */
export function requireSocat(): string {
  const found = (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'socat'))
    .find((p) => existsSync(p));
  if (!found) throw new Error('socat is required for the end-to-end tests (apt-get install socat); it is not on PATH');
  return found;
}

/** Fails with a clear message when the build the child runs is missing. */
export function requireBuild(): void {
  if (!existsSync(join(repoRoot, 'dist/bundle/cli.js')) || !existsSync(limsMain)) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` does)');
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` holds; throws naming `what` after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(25);
  }
}

const handedOut = new Set<number>();

/** A free TCP port on 127.0.0.1, never the same one twice (the gateway's ports are fixed in its config). */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

/** A temporary directory removed by `cleanup()`. */
export function scratch(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `labgate-e2e-${prefix}-`));
  // LABGATE_E2E_KEEP=1 keeps the directory (config, gateway.log, store) to read after a failure.
  const keep = Boolean(process.env.LABGATE_E2E_KEEP);
  return { dir, cleanup: () => (keep ? console.log(`kept ${dir}`) : rmSync(dir, { recursive: true, force: true })) };
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

/** A socat pseudo-terminal pair: `device` is what the gateway opens, `analyzer` the far end of the cable. */
export class Cable {
  readonly device: string;
  readonly analyzer: string;
  private socat: ChildProcess | undefined;

  /** Both ends in `dir`; the gateway's end in `deviceDir` instead, named `deviceName`, when given (a new port appearing). */
  constructor(dir: string, deviceDir = dir, deviceName = 'device') {
    this.device = join(deviceDir, deviceName);
    this.analyzer = join(dir, 'analyzer');
  }

  /** Starts socat and waits for both links. */
  async plug(): Promise<void> {
    const socat = requireSocat();
    this.socat = spawn(socat, [`pty,raw,echo=0,link=${this.device}`, `pty,raw,echo=0,link=${this.analyzer}`], { stdio: 'ignore' });
    await until(() => existsSync(this.device) && existsSync(this.analyzer), 5_000, 'socat pseudo-terminals');
  }

  /** Kills socat (the cable is pulled: both ends see the line drop) and waits until its links are gone. */
  async unplug(): Promise<void> {
    const socat = this.socat;
    if (!socat) return;
    this.socat = undefined;
    const gone = exited(socat);
    socat.kill('SIGTERM');
    await gone;
    await until(() => !existsSync(this.device) && !existsSync(this.analyzer), 5_000, 'socat links removed');
  }

  /** Opens the analyzer's end with the native serialport binding. */
  async openAnalyzer(baudRate = 115_200): Promise<SerialTransport> {
    const port = new SerialPort({ path: this.analyzer, baudRate, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    return new SerialTransport(port);
  }
}

/** A scratch directory with a plugged socat cable in it; both are undone by the `cleanups` the caller runs. */
export async function cabledScratch(name: string, cleanups: (() => Promise<void> | void)[]): Promise<{ dir: string; cable: Cable }> {
  requireSocat();
  const s = scratch(name);
  cleanups.push(s.cleanup);
  const cable = new Cable(s.dir);
  await cable.plug();
  cleanups.push(() => cable.unplug());
  return { dir: s.dir, cable };
}

/** The LIMS test server running as its own process, reached only over HTTP like the gateway reaches it. */
export interface LimsChild {
  url: string;
  /** The static bearer token it accepts (the gateway reads it from tokenFile). */
  token: string;
  resourcePath: string;
  stats(): Promise<{ records: number; applied: number; replays: number }>;
  /** HTTP status of GET {resourcePath}/{id}. */
  recordStatus(id: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts `node dist/src/lims-server/main.js` and reads the URL it prints; `extra` adds server options (orders, faults). */
export async function startLims(extra: object = {}): Promise<LimsChild> {
  requireBuild();
  const token = 'e2e-static-token';
  const resourcePath = '/api/v1/results';
  const child = spawn(process.execPath, [limsMain, JSON.stringify({ ...extra, staticTokens: [token], resourcePath })], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const line = out
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`LIMS test server exited with ${code} before listening`)));
  });
  const auth = { authorization: `Bearer ${token}` };
  return {
    url,
    token,
    resourcePath,
    stats: async () => (await fetch(`${url}/_admin/stats`)).json() as Promise<{ records: number; applied: number; replays: number }>,
    recordStatus: async (id) => {
      const res = await fetch(`${url}${resourcePath}/${encodeURIComponent(id)}`, { headers: auth });
      await res.arrayBuffer();
      return res.status;
    },
    stop: async () => {
      const gone = exited(child);
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** What a test configures; everything else is fixed for the suite (fast retries, small pools). */
export interface GatewaySetup {
  dir: string;
  httpPort: number;
  instruments: object[];
  lims?: LimsChild;
  /** The central schema (test/postgres/pg.ts's TestDatabase, or the soak's own): only its URL and name are read. */
  pg?: { url: string; schema: string };
  /** The FHIR test server (fhir-child.ts): its `sinkConfig` gives the `sinks.fhir` section. */
  fhir?: { sinkConfig(dir: string): object };
  diskFloorMb?: number;
}

/** Writes the gateway's configuration (JSON is YAML) and the LIMS token file; returns the config path. */
export function writeConfig(setup: GatewaySetup): string {
  const { dir } = setup;
  const sinks: Record<string, object> = {};
  if (setup.pg) {
    const url = new URL(setup.pg.url);
    let passwordFile: string | undefined;
    if (url.password) {
      // The config refuses a password in the URL (it must come from a file), so CI's URL is split here.
      passwordFile = join(dir, 'pg-password');
      writeFileSync(passwordFile, decodeURIComponent(url.password), { mode: 0o600 });
      url.password = '';
    }
    // poolSize 1: embedded PGlite serves one connection at a time.
    sinks.postgres = {
      url: url.toString(),
      ...(passwordFile ? { passwordFile } : {}),
      schema: setup.pg.schema,
      poolSize: 1,
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 10_000,
    };
  }
  if (setup.lims) {
    const tokenFile = join(dir, 'lims-token');
    writeFileSync(tokenFile, setup.lims.token, { mode: 0o600 });
    sinks.lims = {
      baseUrl: setup.lims.url,
      resourcePath: setup.lims.resourcePath,
      concurrency: 2,
      batchSize: 32,
      timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
      auth: { kind: 'static', tokenFile },
    };
  }
  if (setup.fhir) sinks.fhir = setup.fhir.sinkConfig(dir);
  const config = {
    gateway: {
      id: 'gw-e2e',
      dataDir: join(dir, 'data'),
      http: { host: '127.0.0.1', port: setup.httpPort },
      logLevel: 'info',
      diskFloorMb: setup.diskFloorMb ?? 0,
    },
    instruments: setup.instruments,
    sinks,
    delivery: { backoff: { baseMs: 100, capMs: 1_000 }, probeIntervalMs: 300, inFlight: 1 },
  };
  const file = join(dir, 'labgate.yaml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** How a gateway child ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** From the signal to the exit. */
  ms: number;
}

/** `node bin/labgate.js run --config FILE` as a child; stdout and stderr are appended to `log`. */
export class GatewayChild {
  private child: ChildProcess | undefined;
  private logFd: number | undefined;
  /** Every start, kill and restart appends here, so a failure can be read afterwards. */
  readonly log: string;
  readonly dataDir: string;

  constructor(
    readonly configFile: string,
    readonly httpPort: number,
    dir: string,
    /** Node's own options before the entry point (the soak runs the gateway with the systemd unit's). */
    readonly nodeArgs: readonly string[] = [],
  ) {
    this.log = join(dir, 'gateway.log');
    this.dataDir = join(dir, 'data');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True while the child has not exited. */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns the gateway and waits until /healthz says it finished starting. */
  async start(env: Record<string, string> = {}): Promise<void> {
    this.spawn(env);
    await this.ready();
  }

  /** Spawns the gateway without waiting for it (a kill during start-up). */
  spawn(env: Record<string, string> = {}): void {
    requireBuild();
    if (this.running) throw new Error('the gateway is already running');
    this.closeLog();
    this.logFd = openSync(this.log, 'a');
    // A fault variable needs the test-only entry point: the installed `labgate run` reads none (test/support).
    const entry = Object.keys(env).some((k) => k.startsWith('LABGATE_FAULT_')) ? withFaults : bin;
    this.child = spawn(process.execPath, [...this.nodeArgs, entry, 'run', '--config', this.configFile], {
      stdio: ['ignore', this.logFd, this.logFd],
      env: { ...process.env, NOTIFY_SOCKET: '', ...env },
    });
  }

  /** Waits until /healthz answers and no longer says "starting"; fails if the child exits first. */
  async ready(): Promise<void> {
    const child = this.child;
    if (!child) throw new Error('the gateway was never spawned');
    await until(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`gateway exited during start (${child.exitCode ?? child.signalCode}); see ${this.log}`);
        const health = await this.health().catch(() => undefined);
        return health !== undefined && !health.body.reasons.some((r) => r.startsWith('starting'));
      },
      15_000,
      'the gateway to be ready',
    );
  }

  /** Sends `signal` and waits for the exit. */
  async kill(signal: NodeJS.Signals): Promise<Exit> {
    const child = this.child;
    if (!child || !this.running) throw new Error('the gateway is not running');
    const started = Date.now();
    const gone = new Promise<Exit>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig, ms: Date.now() - started })));
    child.kill(signal);
    const exit = await gone;
    this.closeLog();
    return exit;
  }

  /** Sends `signal` without waiting for anything (SIGHUP: reload the configuration). */
  signal(signal: NodeJS.Signals): void {
    if (!this.child || !this.running) throw new Error('the gateway is not running');
    this.child.kill(signal);
  }

  /** Cleanup: SIGKILLs the child if it still runs. */
  async stopIfRunning(): Promise<void> {
    if (this.running) await this.kill('SIGKILL');
    this.closeLog();
  }

  /** GET /healthz. */
  async health(): Promise<{ status: number; body: HealthReport }> {
    const res = await fetch(`http://127.0.0.1:${this.httpPort}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: (await res.json()) as HealthReport };
  }

  /** Waits until every sink's outbox rows are sent: nothing pending, dead or in conflict. */
  async drained(ms = 30_000): Promise<void> {
    await until(
      async () => {
        const { body } = await this.health();
        for (const s of body.sinks) if (s.dead > 0 || (s.conflicts ?? 0) > 0) throw new Error(`sink ${s.sink}: ${s.dead} dead, ${s.conflicts ?? 0} conflicts`);
        return body.sinks.length > 0 && body.sinks.every((s) => s.pending === 0);
      },
      ms,
      'both sinks to drain',
    );
  }

  private closeLog(): void {
    if (this.logFd !== undefined) closeSync(this.logFd);
    this.logFd = undefined;
  }
}
