// Messages, a temporary data directory and table dumps for the store tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InboundMessage, Rejection } from '../../src/message.js';
import type { KeyedResult } from '../../src/result.js';
import { afterEach } from 'vitest';
import { migrations } from '../../src/store/migrations.js';
import { openStore, type Store, type StoreOptions } from '../../src/store/store.js';
import { potassium } from '../fixtures/results.js';

/** A potassium-like final result; `n` varies the accession so results get distinct keys. */
export function result(n: number, overrides: Partial<KeyedResult> = {}): KeyedResult {
  return potassium(`A${100 + n}`, overrides);
}

/** One inbound message from chem-1 carrying `results`. */
export function message(results: KeyedResult[], rejections: Rejection[] = [], raw = 'H|\\^&\rR|1|K|4.1\rL|1\r'): InboundMessage {
  return {
    capture: { instrumentId: 'chem-1', protocol: 'astm', receivedAt: Date.UTC(2026, 6, 1, 14, 30, 5), raw: Buffer.from(raw, 'latin1') },
    results,
    rejections,
  };
}

/** Takes an open store back to the schema before `migration` (0-based), as a gateway upgraded from it has it. */
export function downgradeBefore(store: Store, migration: number): void {
  for (const later of migrations.slice(migration)) {
    for (const [, table] of typeof later === 'string' ? later.matchAll(/CREATE TABLE (\w+)/g) : []) store.db.exec(`DROP TABLE ${table}`);
    // An index on a table an earlier migration made outlives the drops above.
    for (const [, index] of typeof later === 'string' ? later.matchAll(/CREATE INDEX (\w+)/g) : []) store.db.exec(`DROP INDEX IF EXISTS ${index}`);
    // So does a trigger on one.
    for (const [, trigger] of typeof later === 'string' ? later.matchAll(/CREATE TRIGGER (\w+)/g) : []) store.db.exec(`DROP TRIGGER IF EXISTS ${trigger}`);
  }
  store.db.pragma(`user_version = ${migration}`);
}

/** A clock tests move by hand. */
export function manualClock(start = Date.UTC(2026, 6, 1, 15, 0, 0)): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

/** A fresh data directory and a way to open stores on it; `cleanup` closes them and removes the directory. */
export function scratch(): {
  dataDir: string;
  clock: { now: () => number; advance: (ms: number) => void };
  open: (options?: Partial<StoreOptions>) => Store;
  cleanup: () => void;
} {
  const dataDir = mkdtempSync(join(tmpdir(), 'labgate-store-'));
  const opened: Store[] = [];
  const clock = manualClock();
  return {
    dataDir,
    clock,
    open: (options = {}) => {
      const store = openStore({ dataDir, sinks: ['postgres', 'lims'], now: clock.now, ...options });
      opened.push(store);
      return store;
    },
    cleanup: () => {
      for (const store of opened) if (store.db.open) store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every row of every table, with the named columns dropped, in a stable order. */
export function dumpTables(store: Store, drop: Record<string, readonly string[]> = {}): Record<string, unknown[]> {
  const tables = ['captures', 'results', 'outbox', 'conflicts', 'audit'];
  const dump: Record<string, unknown[]> = {};
  for (const table of tables) {
    const rows = store.db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all() as Record<string, unknown>[];
    dump[table] = rows.map((row) => {
      const copy = { ...row };
      for (const column of drop[table] ?? []) delete copy[column];
      return copy;
    });
  }
  return dump;
}

/** A fresh data directory (and its stores) per call, removed after each test. */
export function scratchPerTest(): () => ReturnType<typeof scratch> {
  let cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups) cleanup();
    cleanups = [];
  });
  return () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    return s;
  };
}
