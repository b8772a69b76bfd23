// `systemctl reload labgate` (SIGHUP): the configuration file is read again and validated whole, exactly as at start;
// an invalid file changes nothing and says why (log, status page, /healthz) until a valid one is loaded. A valid one
// is compared with the running configuration (config/reload-plan.ts) and the gateway applies the instruments' part.
// Reloads run one at a time: a signal arriving during one is taken after it, against the file as it is then.
import { readConfigurationAsync } from '../config/load.js';
import type { ConfigProblem } from '../config/problem.js';
import { describePlan, planReload, type ReloadPlan } from '../config/reload-plan.js';
import type { Config } from '../config/schema.js';
import { bindInstruments } from '../driver-registry.js';
import { isLabgateError } from '../errors.js';
import type { Log } from '../log.js';

/** The outcome of the last reload, for the page, /healthz and the log. */
export interface ReloadStatus {
  at: number;
  outcome: 'applied' | 'refused';
  /** What was applied, or why nothing was. */
  summary: string;
  /** Why the file was refused (empty when applied). */
  problems: ConfigProblem[];
  /** Changed keys that take effect only after a restart (kept until one, or until a reload takes them back). */
  waitingForRestart: string[];
}

export interface ReloaderOptions {
  file: string;
  /** The configuration the gateway runs with now. */
  current: () => Config;
  /** Applies the plan's instrument changes and makes `next` the running configuration. */
  apply: (plan: ReloadPlan, next: Config) => Promise<void>;
  now: () => number;
  log: Pick<Log, 'info' | 'warn' | 'error'>;
}

/** Reads, validates and applies the configuration file on request. */
export class ConfigReloader {
  private last: ReloadStatus | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** The configuration the gateway started with: a restart applies what differs from it. */
  private started: Config | null = null;

  constructor(private readonly o: ReloaderOptions) {}

  /** The last reload's outcome, or null before the first. */
  status(): ReloadStatus | null {
    return this.last;
  }

  /** Reloads now, or after the reload in progress. */
  reload(): Promise<ReloadStatus> {
    const run = this.queue.then(() => this.once());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async once(): Promise<ReloadStatus> {
    this.started ??= this.o.current();
    const read = await this.read();
    if (read.kind === 'invalid') return this.refused(read.problems);
    const plan = planReload(this.o.current(), read.config);
    // What waits for a restart is measured against the configuration the process started with, so a change that
    // was taken back by a later reload no longer waits.
    const waitingForRestart = planReload(this.started, read.config).needsRestart;
    await this.o.apply(plan, read.config);
    const summary = describePlan({ ...plan, needsRestart: waitingForRestart });
    this.last = { at: this.o.now(), outcome: 'applied', summary, problems: [], waitingForRestart };
    this.o.log.info({ file: this.o.file, summary, waitingForRestart }, 'configuration reloaded');
    return this.last;
  }

  // Read off the event loop (config-file.ts): a FIFO or a huge file in the configuration's place never stalls the analyzers.
  private async read(): Promise<{ kind: 'ok'; config: Config } | { kind: 'invalid'; problems: ConfigProblem[] }> {
    let result;
    try {
      result = (await readConfigurationAsync(this.o.file)).result;
    } catch (err) {
      if (!isLabgateError(err)) throw err;
      return { kind: 'invalid', problems: [{ path: '(file)', message: err.message }] };
    }
    if (result.kind === 'invalid') return result;
    const bound = bindInstruments(result.config);
    return bound.kind === 'invalid' ? bound : result;
  }

  private refused(problems: ConfigProblem[]): ReloadStatus {
    const waitingForRestart = this.last?.waitingForRestart ?? [];
    const summary = `${this.o.file} was not applied (${problems.length} problem${problems.length === 1 ? '' : 's'}); the gateway runs on unchanged`;
    this.last = { at: this.o.now(), outcome: 'refused', summary, problems, waitingForRestart };
    this.o.log.error({ file: this.o.file, problems: problems.map((p) => `${p.path}: ${p.message}`) }, 'configuration reload refused');
    return this.last;
  }
}

/** /healthz's degraded reasons for a reload's outcome: a refused file, changes only a restart applies. */
export function reloadHealth(status: ReloadStatus | null): string[] {
  if (status === null) return [];
  const reasons: string[] = [];
  if (status.outcome === 'refused') {
    const first = status.problems[0];
    reasons.push(
      `configuration: the last reload was refused (${status.problems.length} problem${status.problems.length === 1 ? '' : 's'}${first ? `, first ${first.path}: ${first.message}` : ''}); the gateway runs on the configuration before it`,
    );
  }
  if (status.waitingForRestart.length > 0) {
    reasons.push(`configuration: ${status.waitingForRestart.join(', ')} changed; only a restart applies that (systemctl restart labgate)`);
  }
  return reasons;
}
