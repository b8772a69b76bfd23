// Issue 6, "an outage of minutes", with the real delivery engine: a Drain over a real SQLite store and the LIMS sink
// against the LIMS test server. The drain runs on an injected clock, so "minutes" are minutes of the drain's own
// time: the LIMS is down for 5 of them (probe interval 15 s). Nothing is dead-lettered, no row's attempts are used,
// the drain is back within one probe interval of the recovery, and every record is applied exactly once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Drain } from '../../src/delivery/drain.js';
import type { OutboxRow, Outcome, Sink } from '../../src/sinks/sink.js';
import { openStore, type Store } from '../../src/store/store.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';
import { message, result } from '../store/store-fixtures.js';
import { rig, type Rig } from './harness.js';

const PROBE_MS = 15_000;
const OUTAGE_MS = 5 * 60_000;

let r: Rig | undefined;
let store: Store | undefined;
let dir: string | undefined;
afterEach(async () => {
  await r?.close();
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  r = store = dir = undefined;
});

/** Waits (in real time, for real I/O) until `ready()` holds. */
async function until(ready: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await settle();
}

/** Counts what the drain asked of the sink; the sink itself is the real one. */
function counting(sink: Sink): Sink & { batches: number[] } {
  const batches: number[] = [];
  return { name: sink.name, batches, close: () => sink.close(), deliver: (rows, signal) => (batches.push(rows.length), sink.deliver(rows, signal)) };
}

it('a LIMS outage of five minutes: paused and probed, nothing dead, resumed within one probe interval, applied once', async () => {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 15, 0, 0));
  dir = mkdtempSync(join(tmpdir(), 'labgate-drain-outage-'));
  store = openStore({ dataDir: dir, sinks: ['lims'], now: () => clock.now() });
  const results = Array.from({ length: 240 }, (_, i) => result(i));
  for (let m = 0; m < results.length; m += 20) store.ingest(message(results.slice(m, m + 20)));
  r = await rig({ faults: { latencyMs: 1 } });
  r.server.configure({ outage: true });
  const sink = counting(r.sink);
  const delivered: { at: number; rows: number }[] = [];
  const onOutcomes = (_rows: readonly OutboxRow[], outcomes: readonly Outcome[], now: number): void => {
    const n = outcomes.filter((o) => o.kind === 'delivered').length;
    if (n > 0) delivered.push({ at: now, rows: n });
  };
  const drain = new Drain({
    sink,
    outbox: store.outbox,
    policy: { backoff: { baseMs: 1_000, capMs: 60_000 }, probeIntervalMs: PROBE_MS, batchSize: 50, inFlight: 2 },
    clock,
    random: () => 0.5,
    onOutcomes,
  });
  const idle = (): boolean => drain.status().batchesInFlight === 0;
  const start = clock.now();
  drain.start();
  try {
    await until(() => idle() && drain.status().circuit === 'open', 'the breaker to open');

    // Five minutes of the drain's time, a probe interval at a time: one single-row probe each, none delivered.
    while (clock.now() - start < OUTAGE_MS) {
      clock.advance(PROBE_MS);
      await until(() => idle() && drain.status().circuit === 'open', 'a probe to fail');
    }
    expect(sink.batches.slice(0, 2)).toEqual([50, 50]); // the two batches in flight when the outage was met
    const probes = sink.batches.slice(2);
    expect(probes.length).toBeGreaterThanOrEqual(OUTAGE_MS / PROBE_MS - 1);
    expect(probes.every((n) => n === 1)).toBe(true);
    expect(delivered).toEqual([]);
    expect(outboxStates(store)).toEqual({ pending: results.length, burned: 0 });
    expect(drain.status()).toMatchObject({ deadLettered: 0, circuit: 'open', pausedSince: start });

    // The LIMS comes back between two probes; the next probe (at most one interval later) reopens the flow.
    clock.advance(PROBE_MS / 3);
    const recovered = clock.now();
    r.server.configure({ outage: false });
    clock.advance(PROBE_MS);
    await until(() => (outboxStates(store!).pending ?? 0) === 0, 'the backlog to drain');
    await until(idle, 'the last batch');

    expect(delivered[0]!.at - recovered).toBeLessThanOrEqual(PROBE_MS);
    expect(delivered.reduce((n, d) => n + d.rows, 0)).toBe(results.length);
    expect(drain.status()).toMatchObject({ circuit: 'closed', deadLettered: 0, conflicts: 0, delivered: results.length });
    expect(outboxStates(store)).toEqual({ sent: results.length, burned: 0 });
    const applied = r.server.appliedCounts();
    expect(applied.size).toBe(results.length);
    expect([...applied.values()].every((n) => n === 1)).toBe(true);
  } finally {
    await drain.stop();
  }
});

/** Rows per outbox state, and how many rows have any attempt counted against them. */
function outboxStates(s: Store): Record<string, number> {
  const rows = s.db.prepare(`SELECT state, count(*) AS n FROM outbox WHERE sink = 'lims' GROUP BY state`).all() as { state: string; n: number }[];
  const burned = (s.db.prepare(`SELECT count(*) AS n FROM outbox WHERE sink = 'lims' AND attempts > 0`).get() as { n: number }).n;
  return { ...Object.fromEntries(rows.map((x) => [x.state, x.n])), burned };
}
