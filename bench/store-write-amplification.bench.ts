// Bytes on the SD card per result: what this process makes the kernel write to disk (/proc/self/io: the WAL, the
// database file and every checkpoint, the checkpointer thread's included), from ingest through delivery to
// both sinks, beside the raw capture bytes of the same results. Realistic pace: each 20-result ASTM message is
// committed alone through the gateway's group commit (durable, one WAL fsync) and delivered to the central
// PostgreSQL and the LIMS test server by the real drains before the next one arrives, as in a lab where messages come
// seconds apart. The WAL is checkpointed into the database before and after the measured messages, so pages still
// waiting in the WAL at the end are counted too.
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../src/clock.js';
import { Drain, type DrainPolicy } from '../src/delivery/drain.js';
import type { Sink } from '../src/delivery/contract.js';
import { OutcomeMarks } from '../src/delivery/outcome-marks.js';
import { createIngestPort } from '../src/gateway/ingest-port.js';
import { createLimsSink } from '../src/sinks/lims.js';
import { createPostgresSink } from '../src/sinks/postgres.js';
import { GroupCommit } from '../src/store/group-commit.js';
import { openStore, type Store } from '../src/store/store.js';
import { silentLog } from '../src/log.js';
import { benchDatabase } from './delivery-fixture.js';
import { startLimsChild } from './lims-child.js';
import { sig, type BenchLine } from './line.js';
import { astmMessage } from './store-size.bench.js';

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['store.write-amplification'];

const WARM_MESSAGES = 50;
const MESSAGES = 400;
const SINKS = ['postgres', 'lims'];
const POLICY: DrainPolicy = { backoff: { baseMs: 1_000, capMs: 300_000 }, probeIntervalMs: 15_000, failureThreshold: 5, batchSize: 500, inFlight: 2 };

/** Emits store.write-amplification (Linux only: /proc/self/io). */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  if (writeBytes() === null) return;
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-wa-'));
  const pgdb = await benchDatabase(process.env);
  const lims = await startLimsChild({ staticTokens: ['bench-token'], faults: { latencyMs: 0 } });
  writeFileSync(join(dir, 'token'), 'bench-token');
  const store = openStore({ dataDir: join(dir, 'data'), sinks: SINKS, now: Date.now });
  const sinks: Sink[] = [
    createPostgresSink({ url: pgdb.url, schema: pgdb.schema, poolSize: 2, gatewayId: 'gw-bench' }),
    createLimsSink(
      {
        baseUrl: lims.url,
        resourcePath: '/api/v1/results',
        concurrency: 16,
        timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
        auth: { kind: 'static', tokenFile: join(dir, 'token') },
      },
      { now: Date.now, log: silentLog, gatewayId: 'gw-bench' },
    ),
  ];
  try {
    const pipeline = lab(store, sinks);
    await pipeline.messages(0, WARM_MESSAGES);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const raw = { bytes: 0 };
    const before = writeBytes()!;
    const cpu = process.cpuUsage();
    const split = await pipeline.messages(WARM_MESSAGES, MESSAGES, raw);
    // The marks still waiting are written, and whatever the measured messages left in the WAL reaches the database
    // file sooner or later: counted here.
    await pipeline.stop();
    store.db.pragma('wal_checkpoint(PASSIVE)');
    const written = writeBytes()! - before;
    const used = process.cpuUsage(cpu);
    const results = MESSAGES * 20;
    emit({
      bench: 'store.write-amplification',
      value: sig(written / results),
      unit: 'bytes written per result',
      rawCaptureBytesPerResult: sig(raw.bytes / results),
      ratioToRaw: sig(written / raw.bytes),
      ingestBytesPerResult: sig(split.ingest / results),
      deliveryBytesPerResult: sig(split.delivery / results),
      cpuUsPerResult: sig((used.user + used.system) / results),
      messages: MESSAGES,
      resultsPerMessage: 20,
      sinks: SINKS,
      pace: 'one message at a time, delivered to both sinks before the next',
      server: pgdb.server,
    });
  } finally {
    await Promise.allSettled(sinks.map((s) => s.close()));
    store.close();
    await lims.stop();
    await pgdb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The gateway's ingest port, group commit and one drain per sink over its outcome marks, woken after each commit as the
// gateway wakes them.
function lab(store: Store, sinks: readonly Sink[]) {
  let delivered = 0;
  const outbox = new OutcomeMarks(store.outbox, systemClock);
  const drains = sinks.map(
    (sink) =>
      new Drain({
        sink,
        outbox,
        policy: POLICY,
        clock: systemClock,
        random: Math.random,
        onOutcomes: (_rows, outcomes) => {
          delivered += outcomes.filter((o) => o.kind === 'delivered').length;
          if (outcomes.some((o) => o.kind !== 'delivered')) throw new Error(`not delivered: ${JSON.stringify(outcomes.find((o) => o.kind !== 'delivered'))}`);
        },
      }),
  );
  const group = new GroupCommit(store);
  const port = createIngestPort({ store, group, accepting: () => true, onCommitted: () => drains.forEach((d) => d.notify()), log: { error: () => {} } });
  drains.forEach((d) => d.start());
  let expected = 0;
  return {
    /** Messages [from, from + n), each committed and then delivered to every sink; bytes written by each half. */
    async messages(from: number, n: number, raw?: { bytes: number }): Promise<{ ingest: number; delivery: number }> {
      const split = { ingest: 0, delivery: 0 };
      for (let m = from; m < from + n; m++) {
        const message = astmMessage(m, Date.UTC(2026, 6, 1) + m * 10_000);
        if (raw) raw.bytes += message.capture.raw.length;
        const start = writeBytes()!;
        const outcome = await port(message);
        if (outcome.kind !== 'committed') throw new Error(`message ${m} not committed: ${outcome.reason}`);
        const committed = writeBytes()!;
        expected += message.results.length * sinks.length;
        const deadline = performance.now() + 30_000;
        while (delivered < expected) {
          if (performance.now() > deadline) throw new Error(`delivery stalled at ${delivered} of ${expected}`);
          await sleep(1);
        }
        split.ingest += committed - start;
        split.delivery += writeBytes()! - committed;
      }
      return split;
    },
    async stop(): Promise<void> {
      await Promise.all(drains.map((d) => d.stop()));
    },
  };
}

/**
 * Bytes this process caused to be written to storage so far, or null where /proc/self/io is missing: write_bytes less
 * cancelled_write_bytes, the dirty pages of files deleted before they were written back (SQLite's statement journals
 * spilled to /var/tmp, which never reach the disk).
 */
export function writeBytes(): number | null {
  try {
    const io = readFileSync('/proc/self/io', 'utf8');
    const field = (name: string): number | undefined => {
      const match = new RegExp(`^${name}: (\\d+)$`, 'm').exec(io);
      return match ? Number(match[1]) : undefined;
    };
    const written = field('write_bytes');
    return written === undefined ? null : written - (field('cancelled_write_bytes') ?? 0);
  } catch {
    return null;
  }
}
