// The outbox's counts made off the event loop, for a gateway whose backlog has grown large (outbox-counts.ts). Counting
// a million pending rows walks their index for a hundred milliseconds and more, and the analyzers' ACKs, the drains
// and every other request wait while the loop does it (bench ingest.during-drain: /metrics and the status page both
// count). A worker thread with its own connection runs the same read transaction (outbox-operator.ts, COUNT_SQL) and
// answers the rows; it starts on the first request and stops when idle, like the checkpointer.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { COUNT_SQL, countsOf, type CountRows, type SinkCounts } from './outbox-operator.js';

// A few lines of CommonJS run from a string (no file of its own to find from dist/ or the bundle). One read
// transaction per request, so the four counts are of one instant; answers go back in the order asked.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 5000 });
db.pragma('cache_size = -1000');
const sql = workerData.sql;
const pending = db.prepare(sql.pending), createdAt = db.prepare(sql.createdAt).pluck();
const others = { sent: db.prepare(sql.sent), dead: db.prepare(sql.dead), conflict: db.prepare(sql.conflict) };
const read = db.transaction(() => ({
  pending: pending.all().map((r) => ({ sink: r.sink, n: r.n, oldestAt: createdAt.get(r.first) ?? null })),
  sent: others.sent.all(), dead: others.dead.all(), conflict: others.conflict.all(),
}));
parentPort.on('message', () => {
  try {
    parentPort.postMessage({ ok: read.deferred() });
  } catch (err) {
    parentPort.postMessage({ error: err && err.code ? err.code : String(err) });
  }
});
`;

// How long a worker with nothing to count is kept: a page polled every 2 s or a scrape every 15 s keeps it.
const IDLE_MS = 60_000;

const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

interface Waiting {
  resolve: (counts: SinkCounts[]) => void;
  reject: (err: Error) => void;
}

/** The outbox counts of one database file, read in a worker thread started on the first request. */
export class CountWorker {
  private worker: Worker | null = null;
  private readonly waiting: Waiting[] = [];
  private idle: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly path: string) {}

  /** Each sink's counts as outbox.counts() reads them, from the worker's own connection. */
  count(): Promise<SinkCounts[]> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (this.idle) clearTimeout(this.idle);
      this.idle = null;
      this.thread().postMessage('count');
    });
  }

  /** Stops the worker; counts still asked for are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.fail(new Error('the store is closed'));
    await this.stop();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const { pending, createdAt, sent, dead, conflict } = COUNT_SQL;
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { module: betterSqlite, path: this.path, sql: { pending, createdAt, sent, dead, conflict } },
    });
    // A gateway that exits does not wait for a count.
    worker.unref();
    worker.on('message', (answer: { ok?: CountRows; error?: string }) => {
      const next = this.waiting.shift();
      if (answer.ok) next?.resolve(countsOf(answer.ok));
      else next?.reject(new Error(`outbox count failed: ${answer.error}`));
      if (this.waiting.length === 0 && !this.closed) {
        this.idle = setTimeout(() => void this.stop(), IDLE_MS);
        this.idle.unref();
      }
    });
    worker.on('error', (err) => {
      this.worker = null;
      this.fail(new Error(`outbox count worker stopped: ${err.message}`));
    });
    this.worker = worker;
    return worker;
  }

  private fail(err: Error): void {
    for (const w of this.waiting.splice(0)) w.reject(err);
  }

  private async stop(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}
