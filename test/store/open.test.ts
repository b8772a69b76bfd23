import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLabgateError } from '../../src/errors.js';
import { STORE_SCHEMA, migrate, readStoreSchema } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations.js';
import { message, result, scratchPerTest } from './store-fixtures.js';

const fresh = scratchPerTest();

describe('openStore', () => {
  it('opens with WAL, synchronous=FULL, foreign keys, incremental auto-vacuum and the latest schema', () => {
    const store = fresh().open();
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('auto_vacuum', { simple: true })).toBe(2);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(store.db.pragma('user_version', { simple: true })).toBe(migrations.length);
  });

  it('makes a new store with 2 KiB pages, and opens one made with 4 KiB pages as it is', () => {
    expect(fresh().open().db.pragma('page_size', { simple: true })).toBe(2048);
    // A store from before: its pages stay 4 KiB (a WAL database cannot change them), and it reads and writes as before.
    const s = fresh();
    const older = new Database(join(s.dataDir, 'labgate.db'));
    older.pragma('page_size = 4096');
    older.pragma('journal_mode = WAL');
    older.close();
    const store = s.open();
    expect(store.db.pragma('page_size', { simple: true })).toBe(4096);
    store.ingest(message([result(1), result(2)]));
    store.close();
    expect(s.open().counts()).toMatchObject({ results: 2, capturesAccepted: 1 });
  });

  it('keeps what it stored across a close and reopen, migrating nothing twice', () => {
    const s = fresh();
    const first = s.open();
    first.ingest(message([result(1)]));
    first.close();
    const again = s.open();
    expect(again.counts()).toMatchObject({ results: 1, capturesAccepted: 1 });
  });

  it('refuses a database written by a newer labgate, naming both schemas, and writes nothing to it', () => {
    const s = fresh();
    s.open().close();
    const path = join(s.dataDir, 'labgate.db');
    const db = new Database(path);
    db.exec('CREATE TABLE added_by_a_newer_labgate (x)');
    db.pragma(`user_version = ${migrations.length + 1}`);
    db.close();
    const before = readFileSync(path);
    expect(() => s.open()).toThrow(expect.objectContaining({ code: 'STORE_SCHEMA_NEWER' }));
    // The refused open released the writer lock.
    expect(() => s.open({ lock: true }).close()).toThrow(
      `labgate.db has store schema ${migrations.length + 1}, and this labgate reads schema ${migrations.length} at most`,
    );
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readStoreSchema(path)).toBe(migrations.length + 1);
  });

  it('reads the schema of a store without changing it, and null where there is none', () => {
    const s = fresh();
    const path = join(s.dataDir, 'labgate.db');
    expect(readStoreSchema(path)).toBeNull();
    s.open().close();
    const before = readFileSync(path);
    expect(readStoreSchema(path)).toBe(STORE_SCHEMA);
    expect(STORE_SCHEMA).toBe(migrations.length);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('applies each migration in its own transaction and keeps the version of the last one that succeeded', () => {
    const db = new Database(':memory:');
    const broken = ['CREATE TABLE a (x)', 'CREATE TABLE b (y); CREATE TABLE a (z)'];
    let caught: unknown;
    try {
      migrate(db, broken);
    } catch (err) {
      caught = err;
    }
    expect(isLabgateError(caught, 'STORE_MIGRATION_FAILED')).toBe(true);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all()).toEqual(['a']);
    db.close();
  });
});

describe('a failed ingest', () => {
  it('stores nothing of the message when the disk is full, and the store keeps working', () => {
    const store = fresh().open();
    store.ingest(message([result(1)]));
    const pages = store.db.pragma('page_count', { simple: true }) as number;
    // SQLite's own SQLITE_FULL, as on a full SD card.
    store.db.pragma(`max_page_count = ${pages}`);
    const big = message(
      [...Array(40).keys()].map((n) => result(n + 10)),
      [],
      'x'.repeat(64 * 1024),
    );
    expect(() => store.ingest(big)).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }));
    expect(store.counts()).toMatchObject({ results: 1, capturesAccepted: 1 });
    expect(store.db.prepare('SELECT COUNT(*) FROM audit').pluck().get()).toBe(1);
    store.db.pragma('max_page_count = 1073741823');
    expect(store.ingest(big)).toMatchObject({ inserted: 40 });
  });

  it('rolls back a failure in the middle of a message as a whole', () => {
    const store = fresh().open();
    // A real SQLite failure on the third result's outbox row.
    store.db.exec(`CREATE TEMP TRIGGER fail_third BEFORE INSERT ON outbox
      WHEN (SELECT COUNT(*) FROM outbox) >= 4 BEGIN SELECT RAISE(ABORT, 'injected I/O failure'); END`);
    expect(() => store.ingest(message([result(1), result(2), result(3)]))).toThrow(/injected/);
    expect(store.counts()).toMatchObject({ results: 0, capturesAccepted: 0 });
    store.db.exec('DROP TRIGGER fail_third');
    expect(store.ingest(message([result(1), result(2), result(3)]))).toMatchObject({ captureId: 1, inserted: 3 });
  });
});
