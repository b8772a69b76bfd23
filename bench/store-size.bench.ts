// The store's size per 100,000 results (two sinks, 20-result ASTM messages journaled raw with their framing), so the
// docs/operating.md can tell a lab how big an SD card it needs for its retention period; then one retention run over them:
// how fast it prunes, the longest it holds the write lock, and what is left after incremental vacuum.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { ENQ, encodeFrame } from '../drivers/astm/frame.js';
import { frameTexts } from '../drivers/astm/emulator.js';
import type { InboundMessage } from '../src/message.js';
import type { KeyedResult } from '../src/result.js';
import { pruneOnce } from '../src/store/prune.js';
import { openStore, type Store } from '../src/store/store.js';
import { sig, type BenchLine } from './line.js';

const RESULTS = 100_000;
const PER_MESSAGE = 20;
const SINKS = ['postgres', 'lims'];
const DAY = 86_400_000;
const START = Date.UTC(2026, 6, 1);
const MB = 1024 * 1024;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['store.size', 'retention.prune'];

/** Store size per 100k delivered results, then a retention run's speed and longest batch. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-size-'));
  let clock = START;
  const store = openStore({ dataDir: dir, sinks: SINKS, now: () => clock });
  try {
    // Size does not depend on fsync; only the load is faster without it. Pruning below runs durable, as in service.
    store.db.pragma('synchronous = OFF');
    for (let m = 0; m < RESULTS / PER_MESSAGE; m++) {
      clock = START + m * 1000;
      store.ingest(astmMessage(m, clock));
    }
    const pendingBytes = fileBytes(store, dir);
    deliverAll(store);
    const bytes = fileBytes(store, dir);
    emit({
      bench: 'store.size',
      value: sig(bytes / MB / (RESULTS / 100_000)),
      unit: 'MB per 100k results',
      state: 'delivered',
      pendingMb: sig(pendingBytes / MB / (RESULTS / 100_000)),
      sinks: SINKS.length,
      resultsPerMessage: PER_MESSAGE,
      ...tableShares(store),
    });
    store.db.pragma('synchronous = FULL');
    clock += 31 * DAY;
    await measurePrune(store, dir, clock, emit);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measurePrune(store: Store, dir: string, now: number, emit: (line: BenchLine) => void): Promise<void> {
  let longest = 0;
  let last = performance.now();
  const pause = async (): Promise<void> => {
    longest = Math.max(longest, performance.now() - last);
    await tick();
    last = performance.now();
  };
  const start = performance.now();
  const counts = await pruneOnce(store.db, { results: now - 30 * DAY, audit: now - 365 * DAY, now }, 500, { pause });
  longest = Math.max(longest, performance.now() - last);
  const seconds = (performance.now() - start) / 1000;
  if (counts.results !== RESULTS) throw new Error(`pruned ${counts.results} results, expected ${RESULTS}`);
  emit({
    bench: 'retention.prune',
    value: sig(counts.results / seconds),
    unit: 'results/s',
    batchSize: 500,
    longestBatchMs: sig(longest),
    outboxRows: counts.outbox,
    captures: counts.captures,
    freedMb: sig((counts.freedPages * (store.db.pragma('page_size', { simple: true }) as number)) / MB),
    afterMb: sig(fileBytes(store, dir) / MB),
    synchronous: 'FULL',
  });
}

// Every sink delivers everything (as in service within the retention period: the steady state a card must hold).
function deliverAll(store: Store): void {
  const outcome = { kind: 'delivered' as const };
  for (const sink of SINKS) {
    for (;;) {
      const rows = store.outbox.claimDue(sink, 5000);
      if (rows.length === 0) break;
      store.outbox.recordOutcomes(
        sink,
        rows,
        rows.map(() => outcome),
        rows.map(() => null),
      );
    }
  }
}

function fileBytes(store: Store, dir: string): number {
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  return statSync(join(dir, 'labgate.db')).size;
}

// Per-table share (tables with their indexes) in MB, when SQLite was built with the dbstat table.
function tableShares(store: Store): Record<string, number> {
  try {
    const rows = store.db
      .prepare(
        `SELECT coalesce(m.tbl_name, s.name) AS t, SUM(s.pgsize) AS bytes FROM dbstat s
        LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY t`,
      )
      .all() as { t: string; bytes: number }[];
    return Object.fromEntries(rows.filter((r) => r.bytes > MB / 10).map((r) => [`${r.t}Mb`, sig(r.bytes / MB)]));
  } catch {
    return {};
  }
}

const ANALYTES = ['K', 'NA', 'CL', 'CA', 'MG', 'PHOS', 'GLU', 'BUN', 'CREA', 'UA', 'TP', 'ALB', 'TBIL', 'DBIL', 'ALT', 'AST', 'ALP', 'GGT', 'LDH', 'CK'];

/** A chemistry panel as an analyzer sends it: ENQ, then H, P, O, 20 R records and L in 240-character frames. */
export function astmMessage(m: number, receivedAt: number): InboundMessage {
  const accession = `S${String(m).padStart(9, '0')}`;
  const instrument = `chem-${m % 16}`;
  const resultedAt = new Date(receivedAt - 60_000).toISOString().slice(0, 19) + '+00:00';
  const stamp = resultedAt.slice(0, 19).replace(/[-T:]/g, '');
  const results: KeyedResult[] = [];
  const records = [`H|\\^&|||AU5800^V2.1|||||||P|1|${stamp}`, `P|1||${m}`, `O|1|${accession}||^^^CHEM|R|${stamp}|||||N||||SERUM`];
  ANALYTES.forEach((code, i) => {
    const value = (3.5 + ((m * 7 + i) % 30) / 10).toFixed(1);
    const flag = Number(value) > 5.1 ? 'H' : 'N';
    records.push(`R|${i + 1}|^^^${code}|${value}|mmol/L|3.5^5.1|${flag}||F||||${stamp}|AU5800`);
    results.push({
      accession,
      analyteLoinc: `${2800 + i}-${i % 10}`,
      instrumentId: instrument,
      resultedAt,
      valueText: value,
      value: Number(value),
      comparator: null,
      bound: null,
      unit: 'mmol/L',
      status: 'final',
      statusCode: 'F',
      flags: flag === 'H' ? ['H'] : [],
      referenceRange: '3.5-5.1',
      qc: false,
      source: { gatewayId: 'lab1-gw1', driver: 'astm', analyzerCode: code, captureId: null },
    });
  });
  records.push('L|1|N');
  const texts = frameTexts(Buffer.from(records.map((r) => r + '\r').join(''), 'latin1'), 247, 'message');
  const frames = texts.map((text, i) => encodeFrame(i + 1, text, i === texts.length - 1));
  const raw = Buffer.concat([Buffer.from([ENQ]), ...frames]);
  return { capture: { instrumentId: instrument, protocol: 'astm', receivedAt, raw }, results, rejections: [] };
}
