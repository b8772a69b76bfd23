// The store: the only owner of SQLite.
// Durability rules (kept by every method): WAL, synchronous=FULL, every write is one synchronous
// db.transaction with no await inside, statements prepared once. One writer per data directory (lock.ts).
// The one exception is ingestGroup: its transaction commits without waiting for fsync, and its only caller
// (group-commit.ts) fsyncs the WAL before answering any message in it, off the event loop.
// A write may throw (disk full, I/O error); its transaction is then rolled back whole and the store stays usable.
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type { AnalyteMapping } from '../config/mapping.js';
import type { DecodedMessage, InboundMessage, IngestSummary } from '../message.js';
import { CaptureJournal, type JournaledCapture, type RejectedCapture } from './captures.js';
import { ConflictResolver, type ConflictChoice, type Resolution } from './conflict-resolution.js';
import { CHECKPOINT_BYTES, Checkpointer } from './checkpointer.js';
import { ConfigurationChanges, type ConfigurationChange } from './configuration-changes.js';
import { openDatabase } from './database.js';
import { makePrivateDir, makePrivateFile } from './private-files.js';
import { ResultWriter } from './ingest.js';
import { SteadyTime } from './steady-time.js';
import { SinkFigures, type BacklogSample, type SinkHour } from './sink-figures.js';
import { InstrumentCodes, type CodeSeen } from './instrument-codes.js';
import { InstrumentDays, type HourFigures, type InstrumentFigures } from './instrument-days.js';
import { outboxRangeOf } from './layout.js';
import { MessageCommits } from './message-commits.js';
import { acquireDataDirLock, type DataDirLock } from './lock.js';
import { OrderStore } from './order-store.js';
import { Outbox } from './outbox.js';
import { BACKSTOP_CHECKPOINT_BYTES, walFrames } from './wal-bound.js';
import { WalSync } from './wal-sync.js';
import { CountWorker } from './count-worker.js';
import { OutboxCounts } from './outbox-counts.js';
import { StoreReads, type OpenConflict, type RecentResult, type ResultRef, type SinkDelivery, type StoreCounts } from './reads.js';

export type {
  BacklogSample,
  ConfigurationChange,
  CodeSeen,
  ConflictChoice,
  HourFigures,
  InstrumentFigures,
  SinkHour,
  OpenConflict,
  RecentResult,
  RejectedCapture,
  Resolution,
  ResultRef,
  SinkDelivery,
  StoreCounts,
};

/** How to open a store: where, which sinks, and the injected clock. */
export interface StoreOptions {
  /** Directory holding labgate.db and the lock; created if missing. */
  dataDir: string;
  /** Names of the configured sinks; each first-inserted patient result gets one outbox row per sink. */
  sinks: readonly string[];
  /** Those of `sinks` that also take quality-control results (tagged by the sink); the others never get one. */
  qcSinks?: readonly string[];
  now: () => number;
  /** A monotonic clock (ms, any origin) that due times follow across wall-clock steps (steady-time.ts); absent: the wall clock. */
  monotonic?: () => number;
  /** False for operator commands (status, dead-letter) that open the database beside a running gateway. Default true. */
  lock?: boolean;
  /** How long a write waits for another connection's transaction before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** The local calendar day (`YYYY-MM-DD`) of an instant, for the per-instrument day figures. Default: the process's zone. */
  dayOf?: (at: number) => string;
  /** An instrument's code mapping now (after a reload, the new one), so the codes it keeps are those needing a mapping first. */
  mappingOf?: (instrumentId: string) => readonly AnalyteMapping[] | undefined;
}

/** An operator action for the append-only audit log. */
export interface AuditEntry {
  actor: string;
  action: string;
  subject?: string | null;
  detail?: unknown;
}

/** Opens the data directory's store: takes the writer lock (unless `lock: false`), opens and migrates labgate.db. */
export function openStore(options: StoreOptions): Store {
  makePrivateDir(options.dataDir);
  const lock = options.lock === false ? null : acquireDataDirLock(options.dataDir, options.now);
  try {
    const path = join(options.dataDir, 'labgate.db');
    makePrivateFile(path);
    const db = openDatabase(path, options.busyTimeoutMs ?? 5000);
    return new Store(db, options, lock);
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/** The durable store. */
export class Store {
  readonly outbox: Outbox;
  /** Orders sent to analyzers and the two-way day figures (order-store.ts). */
  readonly orders: OrderStore;
  /** Each sink's backlog through the day and its deliveries per hour (the page's day at a glance). */
  readonly sinkFigures: SinkFigures;
  /** The time due times are written in, which never steps (steady-time.ts). */
  readonly steady: SteadyTime;
  /** The configuration changes in the audit log (the status page's saves and restores). */
  readonly configChanges: ConfigurationChanges;
  /** The outbox counts a running gateway's readers share, made off the event loop while a backlog is large. */
  readonly outboxCounts: OutboxCounts;
  private readonly journal: CaptureJournal;
  private readonly writer: ResultWriter;
  private readonly reads: StoreReads;
  private readonly days: InstrumentDays;
  private readonly codes: InstrumentCodes;
  private readonly commits: MessageCommits;
  private readonly resolveTx: Database.Transaction<(id: number, choice: ConflictChoice, actor: string, now: number, due: number) => Resolution>;
  private readonly maxResultId: Database.Statement;
  private readonly checkpointer: Checkpointer;
  private readonly wal: WalSync;
  private readonly countWorker: CountWorker | null;

  constructor(
    readonly db: Database.Database,
    readonly options: StoreOptions,
    private readonly lock: DataDirLock | null = null,
  ) {
    // Both bounds are bytes of WAL, whatever the store's page size (database.ts).
    this.checkpointer = new Checkpointer(db.name, undefined, walFrames(db, CHECKPOINT_BYTES));
    this.wal = new WalSync(`${db.name}-wal`);
    // SQLite's own checkpoint, on the committing call and so on the event loop, only when the worker falls behind.
    db.pragma(`wal_autocheckpoint = ${walFrames(db, BACKSTOP_CHECKPOINT_BYTES)}`);
    this.steady = new SteadyTime(db, options.now, options.monotonic, lock !== null);
    const due = (): number => this.steady.now();
    this.outbox = new Outbox(db, options.now, () => this.checkpointer.requestWhenDue(), due);
    // Only the gateway (the writer) has readers to share counts with; an operator command counts once.
    this.countWorker = lock === null ? null : new CountWorker(db.name);
    const worker = this.countWorker;
    this.outboxCounts = new OutboxCounts(() => this.outbox.counts(), worker ? () => worker.count() : undefined, options.monotonic ?? options.now);
    this.orders = new OrderStore(db, options.now, options.dayOf, due);
    this.journal = new CaptureJournal(db);
    this.writer = new ResultWriter(db, options.sinks, options.qcSinks);
    this.reads = new StoreReads(db);
    this.days = new InstrumentDays(db, options.dayOf);
    this.codes = new InstrumentCodes(db, options.mappingOf);
    // Only the writer prunes: an operator command beside a running gateway reads.
    if (lock !== null) this.codes.pruneAll();
    this.sinkFigures = new SinkFigures(db);
    this.commits = new MessageCommits(db, { journal: this.journal, writer: this.writer, days: this.days, codes: this.codes }, options.now, due);
    this.maxResultId = db.prepare('SELECT COALESCE(MAX(id), 0) FROM results').pluck();
    this.configChanges = new ConfigurationChanges(db);
    const resolver = new ConflictResolver(db, options.sinks, options.qcSinks);
    this.resolveTx = db.transaction((id, choice, actor, now, due) => resolver.resolve(id, choice, actor, now, due));
  }

  /**
   * Journals the capture and commits its results, outbox rows and audit entries in ONE transaction.
   * Throws when SQLite cannot commit (disk full, I/O error): nothing of the message is then stored, and the
   * caller (the runtime's IngestPort) turns that into `unavailable` so the analyzer keeps its result.
   */
  ingest(message: InboundMessage): IngestSummary {
    return this.commits.ingest(message);
  }

  /**
   * Commits `messages` in ONE transaction, each in its own savepoint: a message whose statements fail is rolled back
   * alone and comes back as its Error, the others commit. The commit does not wait for fsync (synchronous=NORMAL for
   * this transaction only): nothing in it is durable until the caller's syncWal() resolves, and no message may be
   * answered before. Throws when the transaction as a whole fails; then none of it is stored.
   */
  ingestGroup(messages: readonly InboundMessage[]): (IngestSummary | Error)[] {
    return this.commits.ingestGroup(messages);
  }

  /** The highest result id so far (0 when none): the results a group commit then makes have higher ones. */
  lastResultId(): number {
    return this.maxResultId.get() as number;
  }

  /** Keeps the outbox rows of results above `resultId` out of the drains' claims (committed, not yet durable); null lets them in. */
  holdAfter(resultId: number | null): void {
    this.outbox.holdUnsynced(resultId === null ? null : [outboxRangeOf(resultId + 1)[0], Number.MAX_SAFE_INTEGER]);
  }

  /**
   * Makes everything committed so far durable: fdatasync of the WAL file, as SQLite's own FULL commit does on Linux,
   * on libuv's thread pool so the event loop keeps running. Linux flushes a file's data whichever descriptor asks, so a
   * descriptor of our own, kept open (wal-sync.ts), flushes SQLite's writes; fdatasync flushes the file's length when
   * it grew, and skips only its times, which spares the file system's journal a commit when SQLite rewrites the WAL
   * from its start. Then asks for a checkpoint off the event loop once the WAL has grown enough (checkpointer.ts), so
   * the next commits do not run one themselves.
   */
  async syncWal(): Promise<void> {
    await this.wal.sync();
    this.checkpointer.requestWhenDue();
  }

  /** Re-ingests a rejected capture decoded again (after a configuration fix), under the same rules, counting nothing twice. */
  reprocess(captureId: number, decoded: DecodedMessage, actor: string): IngestSummary {
    return this.commits.reprocess(captureId, decoded, actor);
  }

  /** Rejected captures, oldest first, without their raw bytes. */
  rejectedCaptures(limit: number): RejectedCapture[] {
    return this.journal.rejected(limit);
  }

  /** A journaled capture's metadata (no raw bytes), or undefined. */
  capture(id: number): JournaledCapture | undefined {
    return this.journal.find(id);
  }

  /** The raw bytes of a capture exactly as received, or undefined when there is no such capture. */
  captureRaw(id: number): Buffer | undefined {
    return this.journal.raw(id);
  }

  /** How many rejected captures and open conflicts wait for a person, each from its partial index. */
  queueCounts(): { rejectedCaptures: number; conflicts: number } {
    return this.reads.queueCounts();
  }

  /** Totals of results, captures and open conflicts. */
  counts(): StoreCounts {
    return this.reads.counts();
  }

  /** Every instrument's figures for the local `day` (`YYYY-MM-DD`) and its last message time, in one small read. */
  instrumentFigures(day: string): InstrumentFigures[] {
    return this.days.figures(day);
  }

  /** Every instrument's figures per hour from `sinceHour` (epoch hours) on, for the day at a glance. */
  instrumentHours(sinceHour: number): HourFigures[] {
    return this.days.hours(sinceHour);
  }

  /** The analyzer codes each instrument has sent, mapped or not, with count and last value; of one instrument (at most KEEP_CODES, newest first) or all. */
  codesSeen(instrumentId?: string): CodeSeen[] {
    return instrumentId === undefined ? this.codes.all() : this.codes.of(instrumentId);
  }

  /** The most recently stored results, newest first. */
  recentResults(limit: number): RecentResult[] {
    return this.reads.recentResults(limit);
  }

  /** Unresolved conflicts, oldest first. */
  openConflicts(limit: number): OpenConflict[] {
    return this.reads.openConflicts(limit);
  }

  /**
   * Resolves an open conflict in ONE transaction, audited with `actor`: `keep` leaves the stored version and sends
   * nothing; `forward` queues the other version to the sinks as a correction (conflict-resolution.ts).
   */
  resolveConflict(id: number, choice: ConflictChoice, actor: string): Resolution {
    const resolution = this.resolveTx.immediate(id, choice, actor, this.options.now(), this.steady.now());
    // A forward replaces a result's payload: what was claimed before it is marked only if it carried the one stored now.
    if (resolution.kind === 'done') this.outbox.payloadsReplaced();
    // What a forward queues may be due behind where the drains' claims stand.
    if (resolution.kind === 'done' && resolution.queued.length > 0) this.outbox.forgetCursors();
    return resolution;
  }

  /** Outbox state per sink of each result, keyed by dedup key, in one indexed query. */
  deliveryStates(results: readonly { dedupKey: string; resultedAt: string }[]): Map<string, SinkDelivery[]> {
    return this.reads.deliveryStates(results);
  }

  /** Accession and LOINC of a stored result (to name a dead letter's sample), or undefined. */
  resultOf(ref: ResultRef): { accession: string; analyteLoinc: string } | undefined {
    return this.reads.resultOf(ref);
  }

  /** Appends an operator action to the audit log. */
  audit(entry: AuditEntry): void {
    const detail = entry.detail === undefined ? null : JSON.stringify(entry.detail);
    this.writer.audit(this.options.now(), entry.actor, entry.action, entry.subject ?? null, detail);
  }

  /** Closes the database, then lets the next process take the data directory. */
  close(): void {
    void this.checkpointer.close();
    void this.countWorker?.close();
    this.wal.close();
    this.db.close();
    this.lock?.release();
  }
}
