// Steady time on a real store: due times written in it survive a step of the wall clock while the gateway runs and
// across a restart; each step is recorded; an operator command beside a running gateway reads the same time.
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { ManualClock } from '../fixtures/manual-clock.js';
import { message, result, scratchPerTest } from './store-fixtures.js';

const scratch = scratchPerTest();
const HOUR = 3_600_000;
const YEAR = 365 * 24 * HOUR;

function gatewayStore(dataDir: string, clock: ManualClock) {
  return openStore({ dataDir, sinks: ['lims'], now: () => clock.now(), monotonic: () => clock.monotonic() });
}

describe('steady time', () => {
  it('starts at the wall clock and keeps its pace when the wall clock steps either way', () => {
    const s = scratch();
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
    const store = gatewayStore(s.dataDir, clock);
    const start = clock.now();
    expect(store.steady.now()).toBe(start);
    clock.advance(5_000);
    clock.step(-2 * HOUR);
    expect(store.steady.now()).toBe(start + 5_000);
    clock.step(YEAR);
    clock.advance(1_000);
    expect(store.steady.now()).toBe(start + 6_000);
    store.close();
  });

  it('records each step once, with its size, and ignores a drift below a second', () => {
    const s = scratch();
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
    const store = gatewayStore(s.dataDir, clock);
    clock.step(400);
    expect(store.steady.check()).toBeNull();
    clock.step(-2 * HOUR);
    expect(store.steady.check()).toMatchObject({ stepMs: -2 * HOUR + 400 });
    expect(store.steady.check()).toBeNull();
    clock.advance(60_000);
    clock.step(YEAR);
    expect(store.steady.check()).toMatchObject({ stepMs: YEAR, wallAt: clock.now() });
    expect(store.steady.steps(0).map((step) => step.stepMs)).toEqual([-2 * HOUR + 400, YEAR]);
    store.close();
  });

  it('measures the age of a wall-clock stamp without the steps forward since (the oldest pending result after a year step)', () => {
    const s = scratch();
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
    const store = gatewayStore(s.dataDir, clock);
    const stamped = clock.now();
    clock.advance(10 * 60_000);
    clock.step(YEAR);
    store.steady.check();
    clock.advance(5 * 60_000);
    expect(store.steady.ageMs(stamped, clock.now())).toBe(15 * 60_000);
    expect(store.steady.ageMs(clock.now() - 60_000, clock.now())).toBe(60_000);
    expect(store.steady.forwardStepsWithin(HOUR)).toBe(YEAR);
    clock.advance(HOUR);
    expect(store.steady.forwardStepsWithin(HOUR)).toBe(0);
    store.close();
  });

  it('continues across a restart from the last pair saved, not from a wall clock that stepped back meanwhile', () => {
    const s = scratch();
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
    let store = gatewayStore(s.dataDir, clock);
    clock.advance(10_000);
    clock.step(-2 * HOUR);
    store.steady.check();
    const before = store.steady.now();
    store.close();
    // Restarted 30 s later (a new process: a new monotonic origin), and while stopped the clock stepped back again.
    clock.advance(30_000);
    const restarted = new ManualClock(clock.now() - HOUR);
    store = gatewayStore(s.dataDir, restarted);
    expect(store.steady.now()).toBe(before);
    restarted.advance(1_000);
    expect(store.steady.now()).toBe(before + 1_000);
    store.close();
  });

  it('gives an operator command beside the gateway the gateway steady time (from the saved pair)', () => {
    const s = scratch();
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
    const store = gatewayStore(s.dataDir, clock);
    clock.advance(1_000);
    clock.step(YEAR);
    store.steady.check();
    clock.advance(2_000);
    const operator = openStore({ dataDir: s.dataDir, sinks: ['lims'], now: () => clock.now(), lock: false });
    expect(operator.steady.now()).toBe(store.steady.now());
    operator.close();
    store.close();
  });

  it('writes a new result due now on the steady clock, so a step forward does not put it a year away', () => {
    const s = scratch();
    const clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
    const store = gatewayStore(s.dataDir, clock);
    clock.step(YEAR);
    store.ingest(message([result(1)]));
    expect(store.outbox.claimDue('lims', 10)).toHaveLength(1);
    store.close();
  });
});
