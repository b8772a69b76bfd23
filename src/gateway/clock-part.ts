// The gateway's clock part: every few seconds it compares the wall clock with the store's steady time, so that a step
// (NTP answering a Pi that booted with a stale time) is recorded for a restart and for retention, and logged once.
import type { Clock } from '../clock.js';
import { formatDuration } from '../duration.js';
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

/** A step in words: `back 2h 0m`, `forward 365d 0h`. */
export function describeStep(stepMs: number): string {
  return `${stepMs < 0 ? 'back' : 'forward'} ${formatDuration(Math.round(Math.abs(stepMs) / 1000))}`;
}
