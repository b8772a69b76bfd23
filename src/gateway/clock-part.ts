// The gateway's clock part: every few seconds it compares the wall clock with the store's steady time, so that a step
// (NTP answering a Pi that booted with a stale time) is recorded for a restart and for retention, and logged once.
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { ClockStep } from '../store/steady-time.js';
import type { Part } from './lifecycle.js';

/** What the clock part needs. */
export interface ClockPartDeps {
  /** The store's steady time (opened by the part before this one). */
  steady: () => { check(): ClockStep | null };
  clock: Clock;
  log: Log;
  /** Between looks. Default 5 s. */
  intervalMs?: number;
}

/** Looks for wall-clock steps while the gateway runs. */
export class ClockPart implements Part {
  readonly name = 'clock';
  private timer: unknown = undefined;

  constructor(private readonly deps: ClockPartDeps) {}

  start(): void {
    this.look();
  }

  stop(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private look(): void {
    const step = this.deps.steady().check();
    if (step) this.deps.log.warn({ stepMs: step.stepMs }, `the wall clock stepped ${describeStep(step.stepMs)}; due times and waits keep their length`);
    this.timer = this.deps.clock.setTimeout(() => this.look(), this.deps.intervalMs ?? 5_000);
  }
}

/** A step in words: `back 2 h 0 min`, `forward 365 d`. */
export function describeStep(stepMs: number): string {
  const ms = Math.abs(stepMs);
  const way = stepMs < 0 ? 'back' : 'forward';
  if (ms >= 86_400_000) return `${way} ${Math.round(ms / 86_400_000)} d`;
  if (ms >= 3_600_000) return `${way} ${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
  if (ms >= 60_000) return `${way} ${Math.round(ms / 60_000)} min`;
  return `${way} ${(ms / 1000).toFixed(1)} s`;
}
