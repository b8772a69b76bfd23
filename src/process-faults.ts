// What `labgate run` does with an error nothing caught. A rejected promise nobody awaited is a bug in one code path
// (a request handler, a timer's callback), not a sign that the process state is corrupt: the gateway logs it with its
// stack, counts it (/metrics, and /healthz turns degraded so the bug is seen), and keeps answering its analyzers,
// whose in-memory sessions (a line printer's open report) a restart would lose. A synchronous uncaught exception is
// left to Node's default, which ends the process (systemd restarts it within seconds and recovery needs no replay):
// it can interrupt any code between two statements, so the state it leaves behind is not trusted.
import type { Log } from './log.js';

/** Unhandled errors since start, for /healthz and /metrics. */
export class ProcessFaults {
  private unhandled = 0;
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly log: Log) {}

  /** How many rejections went unhandled since start. */
  get count(): number {
    return this.unhandled;
  }

  /** Called after each recorded rejection (the metrics counter). */
  onRecord(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Logs and counts one unhandled rejection. */
  record(reason: unknown): void {
    this.unhandled += 1;
    const err = reason instanceof Error ? reason : new Error(`non-error rejection: ${String(reason)}`);
    this.log.error({ err, unhandled: this.unhandled }, 'unhandled promise rejection (a bug); the gateway keeps running');
    for (const l of this.listeners) l();
  }

  /** Installs the process handlers; returns their removal. */
  install(proc: NodeJS.Process): () => void {
    const onRejection = (reason: unknown): void => this.record(reason);
    // The monitor logs without changing Node's default: the process still ends after it.
    const onException = (err: Error): void => this.log.fatal({ err }, 'uncaught exception; the process ends and systemd restarts it');
    proc.on('unhandledRejection', onRejection);
    proc.on('uncaughtExceptionMonitor', onException);
    return () => {
      proc.off('unhandledRejection', onRejection);
      proc.off('uncaughtExceptionMonitor', onException);
    };
  }
}
