// sd_notify for Type=notify. Node has no unix datagram sockets, so this runs the `systemd-notify` binary,
// which systemd ships. It blocks until PID 1 has processed the message (a BARRIER, systemd ≥ 246), so the
// short-lived child cannot exit before PID 1 has attributed it to the unit; the unit sets NotifyAccess=all
// because the sender is our child, not the main process. Without $NOTIFY_SOCKET every call is a no-op.
import { execFile } from 'node:child_process';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';

/** Runs `systemd-notify` with the given arguments and environment; injected in tests. */
export type NotifyExec = (args: string[], env: NodeJS.ProcessEnv) => Promise<void>;

const defaultExec: NotifyExec = (args, env) =>
  new Promise((resolve, reject) => {
    execFile('systemd-notify', args, { timeout: 5_000, env }, (err) => (err ? reject(err) : resolve()));
  });

export interface NotifierOptions {
  /** The environment systemd gave us (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID). */
  env: NodeJS.ProcessEnv;
  pid: number;
  log: Log;
  exec?: NotifyExec;
}

/** Talks to the service manager; every method resolves (a failed notification is logged, never thrown). */
export class SystemdNotifier {
  private readonly exec: NotifyExec;
  readonly enabled: boolean;
  /** The watchdog interval systemd expects, in ms; undefined when the watchdog is off for this process. */
  readonly watchdogMs: number | undefined;

  constructor(private readonly options: NotifierOptions) {
    this.exec = options.exec ?? defaultExec;
    this.enabled = Boolean(options.env['NOTIFY_SOCKET']);
    const usec = Number(options.env['WATCHDOG_USEC']);
    const forPid = options.env['WATCHDOG_PID'];
    const ours = forPid === undefined || Number(forPid) === options.pid;
    this.watchdogMs = this.enabled && ours && Number.isFinite(usec) && usec > 0 ? Math.floor(usec / 1000) : undefined;
  }

  /** READY=1: only after store recovery, instruments and drains have started. */
  ready(status?: string): Promise<void> {
    return this.send(['READY=1', ...(status ? [`STATUS=${status}`] : [])]);
  }

  /** STOPPING=1 at the start of shutdown. */
  stopping(): Promise<void> {
    return this.send(['STOPPING=1']);
  }

  /** STATUS=... shown by `systemctl status`. */
  status(text: string): Promise<void> {
    return this.send([`STATUS=${text}`]);
  }

  watchdog(): Promise<void> {
    return this.send(['WATCHDOG=1']);
  }

  /**
   * Sends WATCHDOG=1 at half the interval systemd asked for, from the event loop: a loop blocked for longer
   * than WatchdogSec gets the service restarted. Returns the function that stops it.
   */
  startWatchdog(clock: Clock): () => void {
    const interval = this.watchdogMs;
    if (interval === undefined) return () => {};
    let timer: unknown;
    let stopped = false;
    const tick = (): void => {
      void this.watchdog().finally(() => {
        if (!stopped) timer = clock.setTimeout(tick, Math.max(1_000, Math.floor(interval / 2)));
      });
    };
    tick();
    return () => {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    };
  }

  private async send(assignments: string[]): Promise<void> {
    if (!this.enabled) return;
    try {
      const { NOTIFY_SOCKET, PATH } = this.options.env;
      await this.exec(assignments, { NOTIFY_SOCKET, PATH: PATH ?? '/usr/bin:/bin' });
    } catch (err) {
      this.options.log.warn({ err, assignments }, 'systemd-notify failed');
    }
  }
}
