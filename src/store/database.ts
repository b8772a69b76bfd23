// Opening labgate.db: the pragmas every durability rule depends on, then the numbered migrations.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { LabgateError } from '../errors.js';
import { migrations, type Migration } from './migrations.js';

/** Opens (creating if missing) the database at `path`, sets the durability pragmas and migrates it. */
export function openDatabase(path: string, busyTimeoutMs: number): Database.Database {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    // Before any pragma: an older labgate leaves a newer store byte for byte as it found it.
    const found = db.pragma('user_version', { simple: true }) as number;
    if (found > migrations.length) throw newerSchema(found, migrations.length);
    // Both only take effect before the first table exists (a store made with 4 KiB pages keeps them).
    // 2 KiB pages: a commit writes every page it touches whole to the WAL and the checkpoint writes it again, and most
    // of a message's pages take a few small rows (an index's newest leaf, the outbox's marks, the day's counters), so
    // half the page is half the bytes on the SD card (bench store.write-amplification: 8,650 -> 6,790 per result).
    // A result's row (about a kilobyte) still fits a page; a large capture overflows either way.
    db.pragma('page_size = 2048');
    // Retention relies on incremental vacuum later.
    db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    // FULL: a commit is on disk before it returns. A group commit alone runs NORMAL and fsyncs the WAL itself, off the
    // event loop, before any acknowledgment (group-commit.ts): the driver's ACK is never ahead of the data (invariant 1).
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // 4 MiB of page cache instead of SQLite's 16 MiB default (per connection): with a million-row backlog the
    // default alone pushes a gateway past 100 MB RSS on a Pi (bench/runtime); ingest appends, so it misses nothing.
    db.pragma('cache_size = -4000');
    migrate(db, migrations);
    refusePreReleaseSchema(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Applies pending migrations, each in its own transaction, tracked with PRAGMA user_version. */
export function migrate(db: Database.Database, list: readonly Migration[]): number {
  // The version is read inside each IMMEDIATE transaction so that two processes opening at once never apply one twice.
  const step = db.transaction((): boolean => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > list.length) throw newerSchema(current, list.length);
    if (current === list.length) return false;
    try {
      const migration = list[current]!;
      if (typeof migration === 'string') db.exec(migration);
      else migration(db);
    } catch (err) {
      throw new LabgateError('STORE_MIGRATION_FAILED', `migration ${current + 1} failed: ${(err as Error).message}`, { cause: err });
    }
    db.pragma(`user_version = ${current + 1}`);
    return true;
  });
  while (step.immediate()) {
    // one migration per transaction
  }
  return list.length;
}

/** The highest store schema this labgate reads: the number of its migrations. */
export const STORE_SCHEMA = migrations.length;

/**
 * The schema version of the store at `path` read without changing anything, or null when there is no store yet.
 * The installer asks this before switching releases, so a release that would refuse the store is never started.
 */
export function readStoreSchema(path: string): number | null {
  if (!existsSync(path)) return null;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/**
 * The refusal of a store whose schema is newer than `reads`. A migration is one-way: an older labgate reading a
 * newer store could misread columns it does not know or break rules a later migration added (a trigger, a
 * constraint), so it refuses the store whole, before any write.
 */
export function newerSchema(found: number, reads: number): LabgateError {
  return new LabgateError(
    'STORE_SCHEMA_NEWER',
    `labgate.db has store schema ${found}, and this labgate reads schema ${reads} at most: a newer labgate has migrated it. ` +
      'Run a labgate that reads it (a migration is never undone; see "Rolling back" in docs/install.md)',
  );
}

// Migration 1 changed before the first release (the payload moved from the outbox to results): a database made by an
// earlier development build has the same version but the old tables. Refuse it by name rather than fail on a query.
function refusePreReleaseSchema(db: Database.Database): void {
  const columns = db.prepare(`SELECT name FROM pragma_table_info('results')`).pluck().all() as string[];
  if (!columns.includes('payload')) {
    throw new LabgateError('STORE_MIGRATION_FAILED', 'labgate.db was made by a pre-release labgate (no results.payload); move it aside');
  }
}
