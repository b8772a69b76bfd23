// Refuse before the SD card is full, instead of crashing when it is: below the floor the gateway stops
// accepting (ENQ gets NAK, HL7 gets AR — the analyzer keeps its results) and health reports failing; it
// resumes by itself once space is back above the floor plus a margin, so it does not flap at the edge.
// The floor holds before every commit, not only at the timer's measurements: an analyzer writes megabytes a second,
// far more than the floor between two of them. Each commit is charged what it may take on disk (commitCost, more
// than its share of the database and the WAL) against the last statfs figure, so the check is arithmetic, not a
// statfs per message; a measurement corrects the estimate once the charges reach the floor (the commit waits refused
// until it answers) or pass a few megabytes. What the store's files may still grow by without a commit (the WAL up to
// its bound, the database file by what the next checkpoint copies into it: store/wal-bound.ts) is counted as taken at
// each measurement: the WAL grows by whole pages, far faster than the charges while it is short.
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
  /** Of freeBytes, what the store's files may still take without a commit charged for it (WAL, checkpoints). */
  reservedBytes?: number;
  accepting: boolean;
  reason?: string;
  checkedAt: number;
}

/** Margin above the floor before accepting again: 10% of the floor, at least 8 MiB. */
export function resumeMargin(floorBytes: number): number {
  return Math.max(Math.round(floorBytes * 0.1), 8 * 1024 * 1024);
}

/**
 * What one message's commit may take on disk, an upper bound: its raw bytes twice (the capture row, and the WAL until
 * a checkpoint), 4 KiB of pages it touches, and 4 KiB per result (results, outbox rows, audit: some 2 KB each in the
 * database, and as much again in the WAL). Measured on tmpfs: 2.7 KB per 100-byte message, 28.5 KB per 20 KB one.
 */
export function commitCost(rawBytes: number, results: number): number {
  return 2 * rawBytes + 4096 * (1 + results);
}

/** Charges since the last measurement after which free space is measured again, however far from the floor. */
export const REMEASURE_BYTES = 8 * 1024 * 1024;

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
  /** Bytes of free space the store's files may still take on their own, read at each measurement (store/wal-bound.ts). */
  reserved?: () => number;
  intervalMs?: number;
  onChange?: (status: DiskStatus) => void;
}

/** Polls free space; `accepting()` is what DriverContext.accepting combines with the shutdown flag. */
export class DiskGuard {
  private current: DiskStatus;
  private timer: unknown;
  private running = false;
  private readonly statfs: StatFs;
  /** Bytes charged since the measurement `current` holds was taken. */
  private charged = 0;
  private measuring: Promise<DiskStatus> | undefined;

  constructor(private readonly options: DiskGuardOptions) {
    this.statfs = options.statfs ?? ((p) => fsStatfs(p));
    this.current = { path: options.path, freeBytes: undefined, floorBytes: options.floorBytes, accepting: true, checkedAt: options.clock.now() };
  }

  /** The last measurement's verdict, and no while the charges since it would take free space below the floor. */
  accepting(): boolean {
    return this.current.accepting && !this.estimatedBelowFloor();
  }

  /**
   * Charges a commit's cost (commitCost) against the last measurement, before the commit. Free space is measured
   * again when the estimate reaches the floor (until then accepting() says no) or after REMEASURE_BYTES of charges.
   */
  charge(bytes: number): void {
    this.charged += bytes;
    if (this.estimatedBelowFloor() || this.charged >= REMEASURE_BYTES) void this.check();
  }

  private estimatedBelowFloor(): boolean {
    const { freeBytes, floorBytes, reservedBytes = 0 } = this.current;
    return floorBytes > 0 && freeBytes !== undefined && freeBytes - reservedBytes - this.charged < floorBytes;
  }

  status(): DiskStatus {
    return { ...this.current };
  }

  /**
   * Measures once and updates the verdict; a call while a measurement runs shares it. An unreadable filesystem
   * refuses: without knowing, ACKing is unsafe.
   */
  check(): Promise<DiskStatus> {
    this.measuring ??= this.measure().finally(() => (this.measuring = undefined));
    return this.measuring;
  }

  private async measure(): Promise<DiskStatus> {
    const { path, floorBytes, clock } = this.options;
    // Charges made while statfs runs may not be in its figure: they stay charged against it. The ones made before are
    // written first: statfs waits a turn of the event loop, after the group commit queued for them (group-commit.ts).
    const before = this.charged;
    let next: DiskStatus;
    try {
      await new Promise((resolve) => setImmediate(resolve));
      const s = await this.statfs(path);
      const freeBytes = s.bavail * s.bsize;
      const reservedBytes = this.options.reserved?.() ?? 0;
      const accepting = diskAccepting(freeBytes - reservedBytes, floorBytes, this.current.accepting);
      next = { path, freeBytes, floorBytes, ...(reservedBytes > 0 ? { reservedBytes } : {}), accepting, checkedAt: clock.now() };
      const kept = reservedBytes > 0 ? ` (${mb(reservedBytes)} of it kept for the store's write-ahead log and checkpoints)` : '';
      if (!accepting) next.reason = `${mb(freeBytes)} free on ${path}${kept}, below the floor of ${mb(floorBytes)}`;
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
    this.charged -= before;
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
