// The gateway's clock part: every few seconds it compares the wall clock with the store's steady time, so that a step
// (NTP answering a Pi that booted with a stale time) is recorded for a restart and for retention and logged once, and
// it asks whether the wall clock is synchronised (clock-sync.ts) for the page, /healthz, /metrics and the receive
// times of what arrives meanwhile.
import { wallTimeOf, type Clock } from '../clock.js';
import { clockSyncProbe, type ClockSync, type ClockSyncProbe } from '../clock-sync.js';
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
  /** Asks whether the clock is synchronised; default the real one (systemd-timesyncd, then timedated). */
  probe?: ClockSyncProbe;
  /** Between looks. Default 5 s. */
  intervalMs?: number;
}

/** The clock as the page, /healthz and /metrics show it. */
export interface ClockStatus extends ClockSync {
  /** The last step seen since start: when (wall time, as the clock reads now) and how far. */
  lastStep?: { at: number; stepMs: number };
}

/** How long the start waits for the first answer on the synchronisation. */
export const FIRST_ANSWER_MS = 10;

/** Looks for wall-clock steps and at the synchronisation while the gateway runs. */
export class ClockPart implements Part {
  readonly name = 'clock';
  private timer: unknown = undefined;
  private running = false;
  private sync: ClockSync = { state: 'unknown', source: 'not asked yet' };
  private lastStep: { monotonicAt: number; stepMs: number } | undefined;
  private readonly probe: ClockSyncProbe;

  constructor(private readonly deps: ClockPartDeps) {
    this.probe = deps.probe ?? clockSyncProbe({ monotonic: () => deps.clock.monotonic() });
  }

  /**
   * Looks once, then every interval. The instruments start once the first answer is in or FIRST_ANSWER_MS have
   * passed: systemd-timesyncd's files answer well within that, so the receive times of the first messages after a
   * power cut know the synchronisation; timedated (a child process over D-Bus, which may first have to start it) can
   * take a second, and the analyzers do not wait for it: its answer arrives while they send.
   */
  async start(): Promise<void> {
    this.running = true;
    const { clock } = this.deps;
    let timer: unknown;
    const waited = new Promise<void>((resolve) => (timer = clock.setTimeout(resolve, FIRST_ANSWER_MS)));
    await Promise.race([this.look(), waited]);
    clock.clearTimeout(timer);
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  status(): ClockStatus {
    const step = this.lastStep;
    return { ...this.sync, ...(step ? { lastStep: { at: wallTimeOf(this.deps.clock, step.monotonicAt), stepMs: step.stepMs } } : {}) };
  }

  /** True while the wall clock is known not to be synchronised: what is stamped now says so. */
  unsynchronised(): boolean {
    return this.sync.state === 'unsynchronised';
  }

  private async look(): Promise<void> {
    const { deps } = this;
    const step = deps.steady().check();
    if (step) {
      this.lastStep = { monotonicAt: deps.clock.monotonic(), stepMs: step.stepMs };
      deps.log.warn({ stepMs: step.stepMs }, `the wall clock stepped ${describeStep(step.stepMs)}; due times and waits keep their length`);
    }
    const sync = await this.probe();
    if (sync.state !== this.sync.state) {
      if (sync.state === 'unsynchronised') deps.log.warn({ source: sync.source }, 'clock not synchronised: times stamped now may be wrong');
      else deps.log.info({ source: sync.source }, sync.state === 'synchronised' ? 'clock synchronised' : 'clock synchronisation unknown');
    }
    this.sync = sync;
    if (this.running) this.timer = deps.clock.setTimeout(() => void this.look(), deps.intervalMs ?? 5_000);
  }
}

/** A step in words: `back 2h 0m`, `forward 365d 0h`. */
export function describeStep(stepMs: number): string {
  return `${stepMs < 0 ? 'back' : 'forward'} ${formatDuration(Math.round(Math.abs(stepMs) / 1000))}`;
}
