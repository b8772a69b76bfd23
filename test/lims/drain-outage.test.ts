// Issue 6, "an outage of minutes", with the real delivery engine: a Drain over a real SQLite store and the LIMS sink
// against the LIMS test server. The drain runs on an injected clock, so "minutes" are minutes of the drain's own
// time: the LIMS is down for 5 of them (probe interval 15 s). Nothing is dead-lettered, no row's attempts are used,
// the drain is back within one probe interval of the recovery, and every record is applied exactly once.
import { afterEach, expect, it } from 'vitest';
import { drainRig, outboxStates, until, type DrainRig } from './drain-rig.js';

const PROBE_MS = 15_000;
const OUTAGE_MS = 5 * 60_000;

let rig: DrainRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

it('a LIMS outage of five minutes: paused and probed, nothing dead, resumed within one probe interval, applied once', async () => {
  rig = await drainRig(240, { policy: { probeIntervalMs: PROBE_MS, batchSize: 50 } });
  const { clock, store, drain, batches, recorded } = rig;
  const results = rig.recordIds;
  rig.lims.server.configure({ outage: true });
  const delivered = (): { at: number; rows: number }[] =>
    recorded.map((b) => ({ at: b.at, rows: b.outcomes.filter((o) => o.kind === 'delivered').length })).filter((b) => b.rows > 0);
  const idle = rig.idle;
  const start = clock.now();
  drain.start();
  await until(() => idle() && drain.status().circuit === 'open', 'the breaker to open');

  // Five minutes of the drain's time, a probe interval at a time: one single-row probe each, none delivered.
  while (clock.now() - start < OUTAGE_MS) {
    clock.advance(PROBE_MS);
    await until(() => idle() && drain.status().circuit === 'open', 'a probe to fail');
  }
  expect(batches.slice(0, 2)).toEqual([50, 50]); // the two batches in flight when the outage was met
  const probes = batches.slice(2);
  expect(probes.length).toBeGreaterThanOrEqual(OUTAGE_MS / PROBE_MS - 1);
  expect(probes.every((n) => n === 1)).toBe(true);
  expect(delivered()).toEqual([]);
  expect(outboxStates(store)).toEqual({ pending: results.length, burned: 0 });
  expect(drain.status()).toMatchObject({ deadLettered: 0, circuit: 'open', pausedSince: start });

  // The LIMS comes back between two probes; the next probe (at most one interval later) reopens the flow.
  clock.advance(PROBE_MS / 3);
  const recovered = clock.now();
  rig.lims.server.configure({ outage: false });
  clock.advance(PROBE_MS);
  await until(() => (outboxStates(store).pending ?? 0) === 0, 'the backlog to drain');
  await until(idle, 'the last batch');

  expect(delivered()[0]!.at - recovered).toBeLessThanOrEqual(PROBE_MS);
  expect(delivered().reduce((n, d) => n + d.rows, 0)).toBe(results.length);
  expect(drain.status()).toMatchObject({ circuit: 'closed', deadLettered: 0, conflicts: 0, delivered: results.length });
  expect(outboxStates(store)).toEqual({ sent: results.length, burned: 0 });
  const applied = rig.lims.server.appliedCounts();
  expect(applied.size).toBe(results.length);
  expect([...applied.values()].every((n) => n === 1)).toBe(true);
});
