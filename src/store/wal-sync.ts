// The group commit's fsync of the WAL (group-commit.ts), on a descriptor kept open for the store's life: one trip to
// libuv's thread pool per group instead of three (open, fdatasync, close). Each trip's answer waits for the event loop,
// which a draining sink holds for milliseconds at a time, and the analyzers' ACKs wait for the last one
// (bench ingest.during-drain). The descriptor stays the file SQLite writes: SQLite deletes or replaces the WAL only
// when the last connection closes or leaves WAL mode, and the store's connection is open until after close() here;
// a checkpoint that truncates it keeps the same file.
import { close, fdatasync, open } from 'node:fs';
import { promisify } from 'node:util';

const openFile = promisify(open);
const datasync = promisify(fdatasync);

/** fdatasync of one WAL file, on a descriptor opened at the first sync and closed with the store. */
export class WalSync {
  private fd: Promise<number> | null = null;
  private syncing = 0;
  private closed = false;

  constructor(private readonly path: string) {}

  /** Makes every byte written to the WAL so far durable. Rejects when the file cannot be opened or synced. */
  async sync(): Promise<void> {
    if (this.closed) throw new Error('the store is closed: its WAL cannot be synced');
    this.syncing++;
    try {
      await datasync(await this.descriptor());
    } finally {
      this.syncing--;
      if (this.closed && this.syncing === 0) this.release();
    }
  }

  /** Closes the descriptor, after the syncs in flight if any. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.syncing === 0) this.release();
  }

  private descriptor(): Promise<number> {
    // A failed open is tried again by the next sync (the WAL before the store's first write does not exist yet).
    this.fd ??= openFile(this.path, 'r').catch((err: unknown) => {
      this.fd = null;
      throw err;
    });
    return this.fd;
  }

  private release(): void {
    const fd = this.fd;
    this.fd = null;
    fd?.then(
      (n) => close(n, () => {}),
      () => {},
    );
  }
}
