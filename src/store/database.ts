// Opening labgate.db: the pragmas every durability rule depends on, then the numbered migrations.
import Database from 'better-sqlite3';
import { LabgateError } from '../errors.js';
import { migrations, type Migration } from './migrations.js';

/** Opens (creating if missing) the database at `path`, sets the durability pragmas and migrates it. */
export function openDatabase(path: string, busyTimeoutMs: number): Database.Database {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    // Only takes effect before the first table exists; retention relies on incremental vacuum later.
    db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    // FULL: a commit is on disk before ingest returns, so the driver's ACK is never ahead of the data (invariant 1).
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
    if (current > list.length) {
      throw new LabgateError(
        'STORE_MIGRATION_FAILED',
        `database schema version ${current} is newer than this labgate (${list.length}); run a newer labgate`,
      );
    }
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

// Migration 1 changed before the first release (the payload moved from the outbox to results): a database made by an
// earlier development build has the same version but the old tables. Refuse it by name rather than fail on a query.
function refusePreReleaseSchema(db: Database.Database): void {
  const columns = db.prepare(`SELECT name FROM pragma_table_info('results')`).pluck().all() as string[];
  if (!columns.includes('payload')) {
    throw new LabgateError('STORE_MIGRATION_FAILED', 'labgate.db was made by a pre-release labgate (no results.payload); move it aside');
  }
}
