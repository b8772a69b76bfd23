// Ingest under load: 16 instruments each sending 20-result messages back to back, waiting for each ACK before the
// next, two sinks, synchronous=FULL with group commit, beside the same workload with no fsync at all measured in the
// same run (target: durability costs at most a fifth of the throughput), and the event loop's delay meanwhile.
// Then the same workload on a disk whose every fsync takes 5 ms more (an SD card): a shim preloaded into a child
// process (LD_PRELOAD, compiled here with cc) sleeps before each fsync/fdatasync; the group commit beside one
// commit per message (grouping off). Without a C compiler the slow-disk line says so.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../src/store/store.js';
import { committer, INSTRUMENTS, runWorkload, type CommitMode, type WorkloadFigures } from './ingest-concurrent-workload.js';
import { sig, type BenchLine } from './line.js';

const TARGET = 0.8;
// Eight short rounds taking turns: a noisy neighbour slows a round of one mode, not the whole figure.
const ROUNDS = 8;
const MESSAGES_EACH = 40;
const SLOW_FSYNC_US = 5000;
const SLOW_MESSAGES_EACH = 40;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['ingest.concurrent', 'ingest.concurrent.slow-fsync'];

/** Emits ingest.concurrent, then ingest.concurrent.slow-fsync. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-'));
  try {
    const { durable, peer, oneByOne, roundRatios } = await alternate(dir);
    const value = durable.results / (durable.ms / 1000);
    const noFsync = peer.results / (peer.ms / 1000);
    const onePerMessage = oneByOne.results / (oneByOne.ms / 1000);
    emit({
      bench: 'ingest.concurrent',
      value: sig(value),
      unit: 'results/s',
      instruments: INSTRUMENTS,
      messagesPerCommit: sig(durable.messagesPerCommit),
      messagesPerFsync: sig(durable.messagesPerFsync),
      noFsync: sig(noFsync),
      ratioToNoFsync: sig(value / noFsync),
      target: TARGET,
      // Each round's durable figure over the no-fsync one measured right after it: how much the machine's noise moved the ratio.
      roundRatios: roundRatios.map((r) => sig(r)),
      ackP99Ms: sig(durable.ackP99Ms),
      eventLoopDelayP99Ms: sig(durable.eventLoopDelayP99Ms),
      noFsyncEventLoopDelayP99Ms: sig(peer.eventLoopDelayP99Ms),
      onePerMessage: sig(onePerMessage),
      onePerMessageAckP99Ms: sig(oneByOne.ackP99Ms),
      onePerMessageEventLoopDelayP99Ms: sig(oneByOne.eventLoopDelayP99Ms),
    });
    emit(slowDisk(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Durable and peer rounds take turns on their own stores, so a disk or CPU whose speed drifts slows both alike.
async function alternate(dir: string): Promise<{ durable: WorkloadFigures; peer: WorkloadFigures; oneByOne: WorkloadFigures; roundRatios: number[] }> {
  let clock = Date.UTC(2026, 6, 1);
  const open = (name: string, mode: CommitMode) => {
    const store = openStore({ dataDir: join(dir, name), sinks: ['postgres', 'lims'], now: () => clock++ });
    return { store, group: committer(store, mode) };
  };
  const runs = { durable: open('durable', 'group'), peer: open('peer', 'no-fsync'), oneByOne: open('one-by-one', 'per-message') };
  const figures = { durable: [] as WorkloadFigures[], peer: [] as WorkloadFigures[], oneByOne: [] as WorkloadFigures[] };
  try {
    // Round 0 warms each store up (statements prepared, the checkpointer started) and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      const first = round * MESSAGES_EACH * INSTRUMENTS;
      for (const name of ['durable', 'peer', 'oneByOne'] as const) {
        const measured = await runWorkload(runs[name].store, runs[name].group, first, MESSAGES_EACH);
        if (round > 0) figures[name].push(measured);
      }
    }
    for (const { store } of Object.values(runs)) {
      const stored = store.counts().results;
      if (stored !== (ROUNDS + 1) * MESSAGES_EACH * INSTRUMENTS * 20) throw new Error(`stored ${stored} results`);
    }
  } finally {
    for (const { store } of Object.values(runs)) store.close();
  }
  const rate = (r: WorkloadFigures): number => r.results / r.ms;
  const roundRatios = figures.durable.map((d, i) => rate(d) / rate(figures.peer[i]!));
  return { durable: total(figures.durable), peer: total(figures.peer), oneByOne: total(figures.oneByOne), roundRatios };
}

// Throughput over the rounds together; the worst round's p99s.
function total(runs: WorkloadFigures[]): WorkloadFigures {
  const results = runs.reduce((n, r) => n + r.results, 0);
  const ms = runs.reduce((n, r) => n + r.ms, 0);
  return {
    results,
    ms,
    messagesPerCommit: runs.reduce((n, r) => n + r.messagesPerCommit, 0) / runs.length,
    messagesPerFsync: runs.reduce((n, r) => n + r.messagesPerFsync, 0) / runs.length,
    ackP99Ms: Math.max(...runs.map((r) => r.ackP99Ms)),
    eventLoopDelayP99Ms: Math.max(...runs.map((r) => r.eventLoopDelayP99Ms)),
  };
}

function slowDisk(dir: string): BenchLine {
  const line = { bench: 'ingest.concurrent.slow-fsync', unit: 'results/s', instruments: INSTRUMENTS, fsyncDelayMs: SLOW_FSYNC_US / 1000 };
  const shim = compileShim(dir);
  if (shim === null) return { ...line, value: 0, skipped: 'no C compiler (cc) to build the fsync-delay shim' };
  const group = child('group', join(dir, 'slow-group'), shim);
  const perMessage = child('per-message', join(dir, 'slow-per-message'), shim);
  const value = group.results / (group.ms / 1000);
  const oneByOne = perMessage.results / (perMessage.ms / 1000);
  return {
    ...line,
    value: sig(value),
    fsyncMsMeasured: sig(group.fsyncMs),
    messagesPerCommit: sig(group.messagesPerCommit),
    messagesPerFsync: sig(group.messagesPerFsync),
    ackP99Ms: sig(group.ackP99Ms),
    eventLoopDelayP99Ms: sig(group.eventLoopDelayP99Ms),
    onePerMessage: sig(oneByOne),
    onePerMessageAckP99Ms: sig(perMessage.ackP99Ms),
    onePerMessageEventLoopDelayP99Ms: sig(perMessage.eventLoopDelayP99Ms),
    ratioToOnePerMessage: sig(value / oneByOne),
  };
}

// fsync and fdatasync that sleep first, then call the real ones (found with dlsym RTLD_NEXT).
const SHIM_C = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
static void pause_first(void) { struct timespec t = { 0, ${SLOW_FSYNC_US * 1000} }; nanosleep(&t, 0); }
int fsync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fsync"); pause_first(); return real(fd); }
int fdatasync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fdatasync"); pause_first(); return real(fd); }
`;

function compileShim(dir: string): string | null {
  const source = join(dir, 'slow-fsync.c');
  const library = join(dir, 'slow-fsync.so');
  writeFileSync(source, SHIM_C);
  try {
    execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', library, source, '-ldl'], { stdio: 'ignore' });
    return library;
  } catch {
    return null;
  }
}

function child(mode: CommitMode, dataDir: string, shim: string): WorkloadFigures & { fsyncMs: number } {
  const script = fileURLToPath(new URL('./ingest-concurrent-child.js', import.meta.url));
  const done = spawnSync(process.execPath, [script, mode, dataDir, String(SLOW_MESSAGES_EACH)], {
    env: { ...process.env, LD_PRELOAD: shim },
    encoding: 'utf8',
  });
  if (done.status !== 0) throw new Error(`slow-fsync ${mode} run failed: ${done.stderr}`);
  return JSON.parse(done.stdout.trim()) as WorkloadFigures & { fsyncMs: number };
}
