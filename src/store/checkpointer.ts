// WAL checkpoints off the event loop. A checkpoint copies the WAL's pages into labgate.db and fsyncs it: on the
// committing connection (SQLite's automatic checkpoint) that holds the event loop for one fsync of megabytes, tens of
// milliseconds on an SD card, every thousand pages. A worker thread with its own connection runs PASSIVE checkpoints
// instead (they never wait for, nor block, the gateway's writer or readers), once the WAL holds `pages` frames not yet
// in the database: a page that several commits rewrite (a table's last page, an index's right edge, a counter, a
// batch of outbox rows marked) then reaches labgate.db once, not once per commit, which halves what the SD card is
// written, and a drain is not shadowed by a checkpoint per batch. The store connection's own automatic checkpoint
// stays as the backstop when the worker falls behind or cannot start.
// Durability is SQLite's: a checkpoint syncs the WAL before it copies and the database after (synchronous=FULL on
// the worker's connection), and the WAL is only rewritten from its start once everything in it is in the database.
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { Worker } from 'node:worker_threads';

// The worker is a few lines of CommonJS run from a string: no file of its own to find from dist/ or from the tests'
// sources. It takes one checkpoint per message and answers with SQLite's [busy, log, checkpointed] or the error's name.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 5000 });
db.pragma('cache_size = -1000');
parentPort.on('message', () => {
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: [row.busy, row.log, row.checkpointed] });
  } catch (err) {
    parentPort.postMessage({ error: err && err.code ? err.code : String(err) });
  }
});
`;

// How long a worker with nothing to do is kept for the next request: longer than a lab's pace takes to fill the WAL.
const IDLE_MS = 60_000;

/** WAL bytes not yet in the database that make a checkpoint worth its writes (SQLite's own default: 1,000 4 KiB pages). */
export const CHECKPOINT_BYTES = 4 * 2 ** 20;

const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

/** Checkpoints of one database file, one at a time, in a worker thread started on the first request. */
export class Checkpointer {
  private worker: Worker | null = null;
  private running = false;
  private again = false;
  private broken = false;
  private done = 0;
  private idle: NodeJS.Timeout | null = null;

  private readonly wal: WalIndex;

  constructor(
    private readonly path: string,
    private readonly onError: (reason: string) => void = () => {},
    /** Frames pending that make a checkpoint due: the store passes CHECKPOINT_BYTES in its pages (wal-bound.ts). */
    private readonly pages = CHECKPOINT_BYTES / 4096,
  ) {
    this.wal = new WalIndex(`${path}-shm`);
  }

  /** Asks for a checkpoint once the WAL holds `pages` frames not yet copied (or when that cannot be read). */
  requestWhenDue(): void {
    const pending = this.wal.pendingFrames();
    if (pending === null || pending >= this.pages) this.request();
  }

  /** Asks for a checkpoint soon: at once when none is running, else right after the one that is. */
  request(): void {
    if (this.broken) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    this.thread().postMessage('checkpoint');
  }

  /** Checkpoints completed so far. */
  get completed(): number {
    return this.done;
  }

  /** Stops the worker (a checkpoint it is running finishes inside SQLite first). */
  async close(): Promise<void> {
    this.broken = true;
    this.wal.close();
    await this.stopThread();
  }

  private async stopThread(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER, { eval: true, workerData: { module: betterSqlite, path: this.path } });
    // A gateway that exits does not wait for its checkpointer: the next open recovers from the WAL.
    worker.unref();
    worker.on('message', (answer: { ok?: number[]; error?: string }) => {
      this.running = false;
      if (answer.error !== undefined) this.onError(`checkpoint failed: ${answer.error}`);
      else this.done++;
      if (this.again) {
        this.again = false;
        this.request();
      } else {
        // A quiet gateway holds no thread: the next request starts one again.
        this.idle = setTimeout(() => void this.stopThread(), IDLE_MS);
        this.idle.unref();
      }
    });
    // The store's automatic checkpoints go on as before without it.
    worker.on('error', (err) => {
      this.broken = true;
      this.worker = null;
      this.onError(`checkpointer stopped: ${err.message}`);
    });
    this.worker = worker;
    return worker;
  }
}

// The WAL's frames not yet checkpointed, read from the wal-index header SQLite keeps in labgate.db-shm (native byte
// order; its layout is part of SQLite's file format, shared by every process that opens the database): mxFrame, the
// last valid frame (offset 16), less nBackfill, the frames already copied into the database (offset 96).
class WalIndex {
  private fd: number | null | undefined;
  private readonly header = Buffer.alloc(100);

  constructor(private readonly path: string) {}

  /** Frames in the WAL not yet in the database, or null when the wal-index cannot be read. */
  pendingFrames(): number | null {
    try {
      this.fd ??= openSync(this.path, 'r');
      if (readSync(this.fd, this.header, 0, 100, 0) < 100) return null;
      const read = endianness() === 'LE' ? (at: number) => this.header.readUInt32LE(at) : (at: number) => this.header.readUInt32BE(at);
      return Math.max(0, read(16) - read(96));
    } catch {
      return null;
    }
  }

  close(): void {
    if (typeof this.fd === 'number') closeSync(this.fd);
    this.fd = null;
  }
}
