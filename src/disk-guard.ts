// Refuse before the SD card is full, instead of crashing when it is: below the floor the gateway stops
// accepting (ENQ gets NAK, HL7 gets AR — the analyzer keeps its results) and health reports failing; it
// resumes by itself once space is back above the floor plus a margin, so it does not flap at the edge.
import { statfs as fsStatfs } from 'node:fs/promises';
import type { Clock } from './clock.js';
import type { Log } from './log.js';

/** Free space as statfs reports it; `bavail` is what an unprivileged user (labgate) may still use. */
export type StatFs = (path: string) => Promise<{ bavail: number; bsize: number }>;

/** The guard's latest verdict, for /healthz and the status page. */
export interface DiskStatus {
  path: string;
  freeBytes: number | undefined;
  floorBytes: number;
  accepting: boolean;
  reason?: string;
  checkedAt: number;
}

/** Margin above the floor before accepting again: 10% of the floor, at least 8 MiB. */
export function resumeMargin(floorBytes: number): number {
  return Math.max(Math.round(floorBytes * 0.1), 8 * 1024 * 1024);
}

/** Pure verdict: refuse below the floor; once refusing, resume only at floor + margin. A floor of 0 disables. */
export function diskAccepting(freeBytes: number, floorBytes: number, wasAccepting: boolean): boolean {
  if (floorBytes <= 0) return true;
  return wasAccepting ? freeBytes >= floorBytes : freeBytes >= floorBytes + resumeMargin(floorBytes);
}

export interface DiskGuardOptions {
  /** The data directory (the filesystem the store writes to). */
  path: string;
  floorBytes: number;
  clock: Clock;
  log: Log;
  statfs?: StatFs;
  intervalMs?: number;
  onChange?: (status: DiskStatus) => void;
}

/** Polls free space; `accepting()` is what DriverContext.accepting combines with the shutdown flag. */
export class DiskGuard {
  private current: DiskStatus;
  private timer: unknown;
  private running = false;
  private readonly statfs: StatFs;

  constructor(private readonly options: DiskGuardOptions) {
    this.statfs = options.statfs ?? ((p) => fsStatfs(p));
    this.current = { path: options.path, freeBytes: undefined, floorBytes: options.floorBytes, accepting: true, checkedAt: options.clock.now() };
  }

  accepting(): boolean {
    return this.current.accepting;
  }

  status(): DiskStatus {
    return { ...this.current };
  }

  /** Measures once and updates the verdict. An unreadable filesystem refuses: without knowing, ACKing is unsafe. */
  async check(): Promise<DiskStatus> {
    const { path, floorBytes, clock } = this.options;
    let next: DiskStatus;
    try {
      const s = await this.statfs(path);
      const freeBytes = s.bavail * s.bsize;
      const accepting = diskAccepting(freeBytes, floorBytes, this.current.accepting);
      next = { path, freeBytes, floorBytes, accepting, checkedAt: clock.now() };
      if (!accepting) next.reason = `${mb(freeBytes)} free on ${path}, below the floor of ${mb(floorBytes)}`;
    } catch (err) {
      next = {
        path,
        freeBytes: undefined,
        floorBytes,
        accepting: false,
        reason: `cannot measure free space on ${path}: ${(err as Error).message}`,
        checkedAt: clock.now(),
      };
    }
    const changed = next.accepting !== this.current.accepting;
    this.current = next;
    if (changed) {
      if (next.accepting) this.options.log.info({ freeBytes: next.freeBytes }, 'disk space back above the floor; accepting again');
      else this.options.log.error({ freeBytes: next.freeBytes, floorBytes }, `not accepting: ${next.reason}`);
      this.options.onChange?.(this.status());
    }
    return this.status();
  }

  /** Checks now, then every intervalMs (default 5 s). */
  async start(): Promise<void> {
    this.running = true;
    await this.check();
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (!this.running) return;
    this.timer = this.options.clock.setTimeout(() => {
      void this.check().finally(() => this.arm());
    }, this.options.intervalMs ?? 5_000);
  }
}

function mb(bytes: number): string {
  return `${Math.floor(bytes / (1024 * 1024))} MB`;
}
