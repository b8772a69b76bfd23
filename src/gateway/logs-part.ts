// The gateway's logs part: the loggers that summarize repeated lines (a full disk's failures, a flood of refusals),
// started first and flushed last, so their timers never outlive the gateway and their last counts are written.
import type { Clock } from '../clock.js';
import { LogSummary } from '../log-summary.js';
import type { Logger } from '../logger.js';
import type { Part } from './lifecycle.js';

/** Makes summarizing loggers and flushes them all at stop. */
export class LogsPart implements Part {
  readonly name = 'logs';
  private readonly summaries: LogSummary[] = [];

  constructor(private readonly clock: Clock) {}

  start(): void {}

  stop(): void {
    this.summaries.forEach((s) => s.flush());
  }

  /** A logger over `log` that writes one line per interval for lines that repeat. */
  summarized(log: Logger): LogSummary {
    const summary = new LogSummary(log, this.clock);
    this.summaries.push(summary);
    return summary;
  }
}
