// The store: the only owner of SQLite. STUB: the foundation work (issue 2) fills this in.
// Durability rules (kept by every method): WAL, synchronous=FULL, every write is one synchronous
// db.transaction with no await inside, statements prepared once.
import type Database from 'better-sqlite3';
import type { InboundMessage } from '../message.js';
import { Outbox } from './outbox.js';

/** What one ingest did. */
export interface IngestSummary {
  captureId: number;
  inserted: number;
  absorbed: number;
  conflicts: number;
  rejected: number;
}

export interface StoreOptions {
  /** Directory holding labgate.db and the lock; created if missing. */
  dataDir: string;
  /** Names of the configured sinks; each first-inserted patient result gets one outbox row per sink. */
  sinks: readonly string[];
  now: () => number;
}

/** The durable store. */
export class Store {
  readonly outbox: Outbox;
  constructor(
    readonly db: Database.Database,
    readonly options: StoreOptions,
  ) {
    this.outbox = new Outbox(db, options.now);
  }

  /** Journals the capture and commits its results, outbox rows and audit entries in ONE transaction. */
  ingest(_message: InboundMessage): IngestSummary {
    throw new Error('not implemented');
  }

  close(): void {
    this.db.close();
  }
}
