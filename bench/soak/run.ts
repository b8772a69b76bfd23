// `npm run soak [-- --minutes N] [--warmup-minutes W]` (not part of `npm test`): a week of a laboratory's life pressed
// into an hour, measured after a warm-up. By default the run takes 130 minutes and the last 60 are measured: in the
// first 70 V8's optimising compiler settles (functions that run once every few minutes, at an outage, an unplug or a
// reload, are optimised one after another for about an hour: docs/benchmarks.md). `--minutes N` alone runs N minutes
// with a tenth of them as warm-up (a quick look, not the ceiling's figure). The real `labgate run` (dist/, started as
// the end-to-end tests start it) with 16 ASTM analyzers on socat cables, each sending a message of five results every
// 4 s and waiting for its ACK; PostgreSQL (LABGATE_TEST_PG_URL) and the LIMS test server, each behind a relay that drops
// it for 40 s every 4 minutes; a SIGHUP with a harmless mapping change every 10 minutes; one cable pulled for 20 s
// every 5 minutes; the status page and /healthz polled. The gateway is sampled every 10 s; after the warm-up the slopes
// are fitted and printed as the bench's JSON lines, then every ACKed result is looked for in both sinks. Exits 1 when a
// ceiling or exactly-once fails. `--samples FILE` appends every sample to FILE as a JSON line (to see what grew);
// `--heap-snapshots DIR` writes three heap snapshots there (heap-snapshots.ts: a diagnosis, not a measurement).
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { migrateCentral } from '../../src/sinks/postgres-schema.js';
import { freePort, GatewayChild, requireBuild, requireSocat, scratch, startLims, until, writeConfig } from '../../test/e2e/harness.js';
import { sig, type BenchLine } from '../line.js';
import { checkExactlyOnce } from './exactly-once.js';
import { Poller, sample, type Sample } from './sampler.js';
import { reloadWithMapping, schedule, type Chore } from './schedule.js';
import { SinkSwitch } from './sink-switch.js';
import { SoakInstrument } from './soak-instrument.js';
import { readUnitRuntime } from './unit-runtime.js';
import { figures, warmupMinutes } from './figures.js';
import { snapshotChores, snapshotNodeArgs } from './heap-snapshots.js';

const INSTRUMENTS = 16;
const SEND_EVERY_MS = 4_000;
const SAMPLE_EVERY_MS = 10_000;
const MINUTE = 60_000;

const DEFAULT_RUN = { minutes: 130, warmup: 70 };
const minutesArg = process.argv.indexOf('--minutes');
const minutes = minutesArg > 0 ? Number(process.argv[minutesArg + 1]) : DEFAULT_RUN.minutes;
if (!(minutes > 0)) throw new Error('--minutes wants a positive number');
const warmupArg = process.argv.indexOf('--warmup-minutes');
const warmup = warmupArg > 0 ? Number(process.argv[warmupArg + 1]) : minutesArg > 0 ? warmupMinutes(minutes) : DEFAULT_RUN.warmup;
// Ten minutes (60 samples), or half of a shorter run, left to fit the slopes on.
if (!(warmup >= 0 && warmup <= minutes - Math.min(10, minutes / 2))) {
  throw new Error('--warmup-minutes wants a number from 0 that leaves ten minutes of the run (half of a shorter one) to measure');
}
// As the systemd unit runs it; `--node-args "..."` replaces the unit's options to node (to compare others), and a
// variable set in the soak's own environment wins over the unit's.
const unit = readUnitRuntime();
const nodeArgsArg = process.argv.indexOf('--node-args');
const snapshotsArg = process.argv.indexOf('--heap-snapshots');
const snapshotDir = snapshotsArg > 0 ? resolve(process.argv[snapshotsArg + 1]!) : undefined;
if (snapshotDir) mkdirSync(snapshotDir, { recursive: true });
const nodeArgs = [
  ...(nodeArgsArg > 0 ? process.argv[nodeArgsArg + 1]!.split(' ').filter(Boolean) : unit.nodeArgs),
  ...(snapshotDir ? snapshotNodeArgs(snapshotDir) : []),
];
const unitEnv = Object.fromEntries(Object.entries(unit.env).filter(([name]) => process.env[name] === undefined));
const pgUrl = process.env.LABGATE_TEST_PG_URL;
if (!pgUrl) throw new Error('LABGATE_TEST_PG_URL is required: the soak runs against a real PostgreSQL');
requireSocat();
requireBuild();

const emit = (line: BenchLine): void => void process.stdout.write(JSON.stringify(line) + '\n');
const cleanups: (() => Promise<void> | void)[] = [];
const loadBefore = loadavg().map((l) => sig(l, 2));
let failed = false;
try {
  failed = !(await soak());
} finally {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
}
process.exitCode = failed ? 1 : 0;

async function soak(): Promise<boolean> {
  const s = scratch('soak');
  cleanups.push(s.cleanup);
  const schema = `soak_${randomBytes(3).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
  pool.on('error', () => {});
  const client = await pool.connect();
  await migrateCentral(client, schema).finally(() => client.release());
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await pool.end();
  });
  const lims = await startLims();
  cleanups.push(() => lims.stop());
  const central = new URL(pgUrl!);
  const pgSwitch = new SinkSwitch('postgres', { host: central.hostname, port: Number(central.port || 5432) });
  const limsSwitch = new SinkSwitch('lims', { host: '127.0.0.1', port: Number(new URL(lims.url).port) });
  await pgSwitch.up();
  await limsSwitch.up();
  cleanups.push(
    () => pgSwitch.down(),
    () => limsSwitch.down(),
  );
  const viaSwitch = new URL(pgUrl!);
  viaSwitch.hostname = '127.0.0.1';
  viaSwitch.port = String(pgSwitch.port);

  const instruments = Array.from({ length: INSTRUMENTS }, (_, i) => {
    const dir = join(s.dir, `chem${i + 1}`);
    mkdirSync(dir);
    return new SoakInstrument(`chem${i + 1}`, dir);
  });
  for (const inst of instruments) {
    await inst.plug();
    cleanups.push(() => inst.cable.unplug());
  }
  const httpPort = await freePort();
  const setup = {
    dir: s.dir,
    httpPort,
    instruments: instruments.map((i) => i.config()),
    lims: { ...lims, url: `http://127.0.0.1:${limsSwitch.port}` },
    pg: { url: viaSwitch.toString(), schema },
  };
  const configFile = writeConfig(setup);
  const gateway = new GatewayChild(configFile, httpPort, s.dir, nodeArgs);
  cleanups.push(() => gateway.stopIfRunning());
  await gateway.start(unitEnv);
  await until(async () => (await gateway.health()).body.instruments.every((i) => i.state === 'connected'), 30_000, 'all instruments connected');
  const pid = gateway.pid!;

  const began = Date.now();
  const hours = (): number => (Date.now() - began) / 3_600_000;
  const samples: Sample[] = [];
  const samplesFile = process.argv.indexOf('--samples') > 0 ? process.argv[process.argv.indexOf('--samples') + 1] : undefined;
  let changedAt = Date.now();
  const steady = (): boolean => pgSwitch.isUp && limsSwitch.isUp && instruments.every((i) => i.isPlugged) && Date.now() - changedAt > 15_000;
  const change = (work: () => Promise<unknown>) => async () => {
    changedAt = Date.now();
    await work();
    changedAt = Date.now();
  };
  const takeSample = async (): Promise<void> => {
    const was = steady();
    const taken = { ...(await sample(pid, httpPort, gateway.dataDir, hours())), steady: was && steady() };
    samples.push(taken);
    if (samplesFile) appendFileSync(samplesFile, JSON.stringify(taken) + '\n');
  };
  const poller = new Poller(httpPort);
  poller.start(2_000);
  let sending = true;
  const senders = instruments.map((inst, i) => inst.sendLoop(SEND_EVERY_MS, (i * SEND_EVERY_MS) / INSTRUMENTS, () => sending));
  const reloads = { applied: 0, refused: 0 };
  let unplugged = 0;
  const chores: Chore[] = [
    { everyMs: SAMPLE_EVERY_MS, atMs: 0, run: takeSample },
    { everyMs: 4 * MINUTE, atMs: MINUTE, run: change(() => pgSwitch.down()) },
    { everyMs: 4 * MINUTE, atMs: MINUTE + 40_000, run: change(() => pgSwitch.up()) },
    { everyMs: 4 * MINUTE, atMs: 3 * MINUTE, run: change(() => limsSwitch.down()) },
    { everyMs: 4 * MINUTE, atMs: 3 * MINUTE + 40_000, run: change(() => limsSwitch.up()) },
    { everyMs: 5 * MINUTE, atMs: 2.5 * MINUTE, run: change(() => instruments[unplugged % INSTRUMENTS]!.unplug()) },
    { everyMs: 5 * MINUTE, atMs: 2.5 * MINUTE + 20_000, run: change(() => instruments[unplugged++ % INSTRUMENTS]!.plug()) },
    // A short run still reloads (at half time); an hour reloads every ten minutes.
    {
      everyMs: Math.min(10 * MINUTE, (minutes * MINUTE) / 2),
      atMs: Math.min(10 * MINUTE, (minutes * MINUTE) / 2),
      run: () => reloadWithMapping(gateway, setup, reloads),
    },
    ...(snapshotDir ? snapshotChores(gateway, snapshotDir, minutes, warmup) : []),
  ];
  await schedule(chores, minutes * MINUTE);

  sending = false;
  await Promise.all(senders);
  poller.stop();
  await pgSwitch.up();
  await limsSwitch.up();
  for (const inst of instruments) if (!inst.isPlugged) await inst.plug();
  await gateway.drained(10 * MINUTE);
  await gateway.kill('SIGTERM');
  const acked = instruments.flatMap((i) => i.ackedKeys());
  const once = await checkExactlyOnce(acked, gateway.dataDir, pool, schema, lims);
  const context = {
    minutes,
    instruments: INSTRUMENTS,
    sessions: instruments.reduce((n, i) => n + i.sessions, 0),
    unacked: instruments.reduce((n, i) => n + i.unacked, 0),
    unplugs: instruments.reduce((n, i) => n + i.unplugs, 0),
    outages: { postgres: pgSwitch.outages, lims: limsSwitch.outages },
    reloads,
    polls: poller.counts,
    loadAverage: { before: loadBefore, after: loadavg().map((l) => sig(l, 2)) },
    cpus: cpus().length,
    runtime: { nodeArgs, malloc: mallocSettings() },
  };
  const lines = figures(samples, minutes, once, context, warmup);
  for (const line of lines) emit(line);
  return lines.every((l) => l.pass !== false);
}

// malloc's settings the gateway ran with: the unit's, or the soak's own environment where it sets one.
function mallocSettings(): Record<string, string> {
  const names = new Set([...Object.keys(unit.env), ...Object.keys(process.env)].filter((name) => name.startsWith('MALLOC_')));
  return Object.fromEntries([...names].sort().map((name) => [name, process.env[name] ?? unit.env[name]!]));
}
