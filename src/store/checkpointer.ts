// WAL checkpoints off the event loop. A checkpoint copies the WAL's pages into labgate.db and fsyncs it: on the
// committing connection (SQLite's automatic checkpoint) that holds the event loop for one fsync of megabytes, tens of
// milliseconds on an SD card, every thousand pages. While ingest runs, a worker thread with its own connection runs
// PASSIVE checkpoints back to back instead (they never wait for, nor block, the gateway's writer or readers); the
// store connection's own automatic checkpoint stays as the backstop when the worker falls behind or cannot start.
// Durability is SQLite's: a checkpoint syncs the WAL before it copies and the database after (synchronous=FULL on
// the worker's connection), and the WAL is only rewritten from its start once everything in it is in the database.
import { createRequire } from 'node:module';
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

// How long a worker with nothing to do is kept for the next request.
const IDLE_MS = 10_000;

const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

/** Checkpoints of one database file, one at a time, in a worker thread started on the first request. */
export class Checkpointer {
  private worker: Worker | null = null;
  private running = false;
  private again = false;
  private broken = false;
  private done = 0;
  private idle: NodeJS.Timeout | null = null;

  constructor(
    private readonly path: string,
    private readonly onError: (reason: string) => void = () => {},
  ) {}

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
