// Retention on an SD card: runs pruneOnce (prune.ts, where the rules are written down) shortly after start and
// then every interval, never in the way of start-up or of an analyzer's commit. The bound on rejected captures is
// also kept as they are journaled (rejected-budget.ts), not only hourly.
import type Database from 'better-sqlite3';
import type { Clock } from '../clock.js';
import { pruneOnce } from './prune.js';
import { RejectedBudget } from './rejected-budget.js';
import type { SteadyTime } from './steady-time.js';
import type { Log } from '../log.js';

const DAY_MS = 86_400_000;

/** Configuration and injected parts of the retention timer. */
export interface RetentionOptions {
  db: Database.Database;
  clock: Clock;
  /** The wall clock's steps (steady-time.ts): a step forward a year makes nothing a year old. */
  steady?: Pick<SteadyTime, 'forwardStepsWithin'>;
  resultsDays: number;
  auditDays: number;
  /** MB of the newest rejected captures kept; older ones go. Absent: every rejected capture is kept. */
  rejectedMb?: number;
  log?: Log;
  /** Between runs. Default one hour. */
  intervalMs?: number;
  /** From start() to the first run, so start-up (and readiness) never waits on pruning. Default one minute. */
  firstRunDelayMs?: number;
  batchSize?: number;
}

/** Runs pruneOnce on a timer: shortly after start, then every interval. */
export class Retention {
  private timer: unknown = null;
  private running: Promise<void> | null = null;
  private abort = new AbortController();
  private active = false;
  private rejectedPruned = 0;
  private readonly budget: RejectedBudget | undefined;

  constructor(private readonly options: RetentionOptions) {
    const { rejectedMb, db, clock, log } = options;
    if (rejectedMb === undefined) return;
    this.budget = new RejectedBudget(db, {
      maxBytes: rejectedMb * 1024 * 1024,
      now: () => clock.now(),
      stopped: () => !this.active,
      ...(options.batchSize ? { batchSize: options.batchSize } : {}),
      onRun: (outcome) => {
        if ('error' in outcome) return log?.error({ err: outcome.error }, 'pruning rejected captures over their bound failed');
        this.rejectedPruned += outcome.removed;
        log?.info({ rejected: outcome.removed, keptBytes: outcome.keptBytes }, 'rejected captures over their bound pruned');
      },
    });
  }

  /** A rejected capture of `rawBytes` was just committed: past the bound, the oldest go now, not at the next run. */
  rejectedJournaled(rawBytes: number): void {
    if (this.active) this.budget?.journaled(rawBytes);
  }

  /** The bound on rejected captures and how many older ones went since start (for the status page). */
  rejectedBound(): { keptMb: number; prunedSinceStart: number } | undefined {
    const { rejectedMb } = this.options;
    return rejectedMb === undefined ? undefined : { keptMb: rejectedMb, prunedSinceStart: this.rejectedPruned };
  }

  /** Arms the first run. */
  start(): void {
    if (this.active) return;
    this.active = true;
    this.abort = new AbortController();
    this.arm(this.options.firstRunDelayMs ?? 60_000);
  }

  /** Disarms the timer and waits for a run in progress to stop at its next batch boundary. */
  async stop(): Promise<void> {
    this.active = false;
    if (this.timer !== null) this.options.clock.clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    await this.running;
    await this.budget?.settled();
  }

  private arm(ms: number): void {
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = null;
      this.running = this.run().finally(() => {
        this.running = null;
        if (this.active) this.arm(this.options.intervalMs ?? 3_600_000);
      });
    }, ms);
  }

  private async run(): Promise<void> {
    const { db, clock, resultsDays, auditDays, rejectedMb, log, batchSize, steady } = this.options;
    const now = clock.now();
    // What was stamped before a step forward is younger than the wall clock says, by the step.
    const before = (days: number): number => now - days * DAY_MS - (steady?.forwardStepsWithin(days * DAY_MS) ?? 0);
    const cutoffs = {
      results: before(resultsDays),
      audit: before(auditDays),
      now,
      ...(rejectedMb === undefined ? {} : { rejectedBytes: rejectedMb * 1024 * 1024 }),
    };
    try {
      const counts = await pruneOnce(db, cutoffs, batchSize ?? 500, { signal: this.abort.signal });
      this.rejectedPruned += counts.rejected;
      log?.info({ ...counts }, 'retention run finished');
    } catch (err) {
      // A full disk or a busy database only delays pruning; the next run tries again.
      log?.error({ err }, 'retention run failed');
    }
  }
}
