// The gateway's steady time: the milliseconds everything the store schedules is written in (outbox and dispatch due
// times). A Raspberry Pi's wall clock steps: without a battery-backed clock it boots with the time saved at the last
// shutdown and jumps when NTP answers, by hours or months, sometimes backward. Steady time never steps: it equals the
// wall clock the first time the store opens, advances with the monotonic clock while the gateway runs, and across a
// restart by the wall time that passed (never by less than nothing). So a retry due in five seconds is due in five
// seconds whatever the wall clock does meanwhile, and a step shows as a change of the difference between the two.
// Rules:
// - The pair (steady, wall) is written at open and after each step, by the lock holder only: a restart continues from
//   it, not from a wall clock that stepped while the gateway ran. An operator command derives the time from the pair.
// - Each step is kept (clock_steps), so that ages measured on the wall clock can discount it (retention).
import type Database from 'better-sqlite3';
import type { Clock } from '../clock.js';

/** A step of the wall clock: how far it moved beyond the time that passed (negative: back), seen at `steadyAt`. */
export interface ClockStep {
  steadyAt: number;
  wallAt: number;
  stepMs: number;
}

/** How far the two clocks may drift apart before it counts as a step (timesyncd slews below 0.4 s, steps above). */
export const STEP_TOLERANCE_MS = 1_000;
// The steps kept: enough for any retention period, bounded whatever a broken clock does.
const KEPT_STEPS = 1_000;

/** The steady time of one store. */
export class SteadyTime {
  private readonly saved: [number, number] | undefined;
  /** The steps recorded, oldest first (few: one per NTP step). */
  private readonly recorded: ClockStep[];
  private readonly base: number;
  private savedOffset: number;
  private readonly save: Database.Statement;
  private readonly addStep: Database.Statement;
  private readonly forgetSteps: Database.Statement;
  private readonly listSteps: Database.Statement;

  /** `monotonic` (ms, any origin) makes it advance on its own; without it (operator commands) it follows the saved pair. */
  constructor(
    db: Database.Database,
    private readonly wall: () => number,
    private readonly monotonic: (() => number) | undefined,
    private readonly writable: boolean,
  ) {
    this.save = db.prepare(
      'INSERT INTO steady_time (id, steady_at, wall_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET steady_at = excluded.steady_at, wall_at = excluded.wall_at',
    );
    this.addStep = db.prepare('INSERT INTO clock_steps (steady_at, wall_at, step_ms) VALUES (?, ?, ?)');
    this.forgetSteps = db.prepare('DELETE FROM clock_steps WHERE id <= (SELECT max(id) FROM clock_steps) - ?');
    this.listSteps = db.prepare('SELECT steady_at AS steadyAt, wall_at AS wallAt, step_ms AS stepMs FROM clock_steps WHERE steady_at >= ? ORDER BY id');
    this.recorded = this.listSteps.all(Number.MIN_SAFE_INTEGER) as ClockStep[];
    this.saved = db.prepare('SELECT steady_at, wall_at FROM steady_time WHERE id = 1').raw().get() as [number, number] | undefined;
    const wallNow = wall();
    const start = continueFrom(this.saved, wallNow);
    this.base = monotonic ? start - monotonic() : Number.NaN;
    this.savedOffset = wallNow - start;
    if (monotonic && writable) this.save.run(start, wallNow);
  }

  /** The steady time now (ms). */
  now(): number {
    if (this.monotonic) return this.base + this.monotonic();
    return continueFrom(this.saved, this.wall());
  }

  /**
   * Compares the two clocks: when the wall clock stepped since the last look, the step is recorded (and the pair saved
   * for a restart) and returned; null otherwise. Cheap: call it every few seconds.
   */
  check(): ClockStep | null {
    if (!this.monotonic) return null;
    const steadyAt = this.now();
    const wallAt = this.wall();
    const offset = wallAt - steadyAt;
    const stepMs = Math.round(offset - this.savedOffset);
    if (Math.abs(stepMs) < STEP_TOLERANCE_MS) return null;
    this.savedOffset = offset;
    const step = { steadyAt, wallAt, stepMs };
    this.recorded.push(step);
    if (this.recorded.length > KEPT_STEPS) this.recorded.shift();
    if (this.writable) {
      this.save.run(steadyAt, wallAt);
      this.addStep.run(steadyAt, wallAt, stepMs);
      this.forgetSteps.run(KEPT_STEPS);
    }
    return step;
  }

  /**
   * How much the wall clock stepped forward in the last `ms` of steady time: an age measured on the wall clock across
   * those steps is too long by as much (retention's cut-offs, prune.ts). Steps back are left out: they only make
   * things look younger, which keeps them longer, never prunes them early.
   */
  forwardStepsWithin(ms: number): number {
    const since = this.now() - ms;
    return this.recorded.reduce((sum, s) => (s.steadyAt >= since && s.stepMs > 0 ? sum + s.stepMs : sum), 0);
  }

  /** The age at wall time `now` of something stamped at wall time `at`, less the forward steps since: a year's step is no year old. */
  ageMs(at: number, now: number): number {
    const stepped = this.recorded.reduce((sum, s) => (s.stepMs > 0 && s.wallAt - s.stepMs > at ? sum + s.stepMs : sum), 0);
    return Math.max(0, now - at - stepped);
  }

  /** The steps recorded at or after steady time `since`, oldest first. */
  steps(since: number): ClockStep[] {
    return this.listSteps.all(since) as ClockStep[];
  }
}

// The saved steady time plus the wall time that passed since it was saved; a wall clock now behind the saved one
// (it stepped back while the gateway was stopped) counts as no time passed.
function continueFrom(saved: [number, number] | undefined, wallNow: number): number {
  if (!saved) return wallNow;
  const [steadyAt, wallAt] = saved;
  return steadyAt + Math.max(0, wallNow - wallAt);
}

/** `clock` with the store's steady time as its monotonic reading: the clock of whatever waits on the store's due times. */
export function steadyClock(clock: Clock, steady: Pick<SteadyTime, 'now'>): Clock {
  return {
    now: () => clock.now(),
    monotonic: () => steady.now(),
    setTimeout: (callback, ms) => clock.setTimeout(callback, ms),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  };
}
