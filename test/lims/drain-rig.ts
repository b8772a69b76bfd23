// The real delivery engine on the LIMS: a store in a temporary directory holding `n` results, a Drain on a manual
// clock, and the LIMS sink against the LIMS test server (whose own time is real). The sink reads the manual clock too,
// so a Retry-After lands on the drain's time line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Drain, type DrainPolicy } from '../../src/delivery/drain.js';
import type { LimsServerOptions } from '../../src/lims-server/server.js';
import type { LimsSinkOptions } from '../../src/sinks/lims.js';
import type { OutboxRow, Outcome, Sink } from '../../src/delivery/contract.js';
import { openStore, type Store } from '../../src/store/store.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';
import { until as poll } from '../fixtures/until.js';
import { message, result } from '../store/store-fixtures.js';
import { rig, type Rig } from './harness.js';

/** Waits (in real time, for real I/O) until `ready()` holds, then lets the drain's follow-up work settle. */
export async function until(ready: () => boolean, what: string, ms = 10_000): Promise<void> {
  await poll(ready, ms, what);
  await settle();
}

/** Rows per outbox state of the LIMS sink, and how many rows have any attempt counted against them. */
export function outboxStates(s: Store): Record<string, number> {
  const rows = s.db.prepare(`SELECT state, count(*) AS n FROM outbox WHERE sink = 'lims' GROUP BY state`).all() as { state: string; n: number }[];
  const burned = (s.db.prepare(`SELECT count(*) AS n FROM outbox WHERE sink = 'lims' AND attempts > 0`).get() as { n: number }).n;
  return { ...Object.fromEntries(rows.map((x) => [x.state, x.n])), burned };
}

/** A running rig; `close()` stops the drain, the sink, the server and removes the store. */
export interface DrainRig {
  clock: ManualClock;
  store: Store;
  lims: Rig;
  drain: Drain;
  /** Rows per batch the drain handed the sink. */
  batches: number[];
  /** The breaker's state after every recorded batch. */
  circuits: string[];
  /** Outcomes of every batch, with the clock time they were recorded. */
  recorded: { at: number; outcomes: readonly Outcome[] }[];
  /** LIMS record ids of the stored results, in ingest order. */
  recordIds: string[];
  idle(): boolean;
  close(): Promise<void>;
}

/** Stores `n` results and starts nothing yet: call `rig.drain.start()`. */
export async function drainRig(
  n: number,
  options: { server?: LimsServerOptions; sink?: Partial<LimsSinkOptions>; policy?: Partial<DrainPolicy> } = {},
): Promise<DrainRig> {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 15, 0, 0));
  const dir = mkdtempSync(join(tmpdir(), 'labgate-lims-drain-'));
  const store = openStore({ dataDir: dir, sinks: ['lims'], now: () => clock.now() });
  const results = Array.from({ length: n }, (_, i) => result(i));
  for (let m = 0; m < results.length; m += 20) store.ingest(message(results.slice(m, m + 20)));
  const lims = await rig({ ...options.server, faults: { latencyMs: 1, ...options.server?.faults } }, options.sink, { now: () => clock.now() });
  const batches: number[] = [];
  const sink: Sink = {
    name: lims.sink.name,
    close: () => lims.sink.close(),
    deliver: (rows, signal) => (batches.push(rows.length), lims.sink.deliver(rows, signal)),
  };
  const circuits: string[] = [];
  const recorded: DrainRig['recorded'] = [];
  const drain: Drain = new Drain({
    sink,
    outbox: store.outbox,
    policy: { backoff: { baseMs: 1_000, capMs: 60_000 }, probeIntervalMs: 15_000, failureThreshold: 5, batchSize: 20, inFlight: 2, ...options.policy },
    clock,
    random: () => 0.5,
    onOutcomes: (_rows: readonly OutboxRow[], outcomes: readonly Outcome[], now: number) => {
      recorded.push({ at: now, outcomes });
      circuits.push(drain.status().circuit);
    },
  });
  const recordIds = store.db.prepare('SELECT record_id FROM results ORDER BY id').pluck().all() as string[];
  return {
    clock,
    store,
    lims,
    drain,
    batches,
    circuits,
    recorded,
    recordIds,
    idle: () => drain.status().batchesInFlight === 0,
    close: async () => {
      await drain.stop();
      await lims.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
