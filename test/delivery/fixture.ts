// Outbox fixtures: a real SQLite store database in a temporary directory and outbox rows as ingest writes them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { buildPayload, sha256Hex } from '../../src/payload.js';
import { clinicalDigest, type KeyedResult } from '../../src/result.js';
import { openDatabase } from '../../src/store/database.js';
import { INSERT_RESULT } from '../../src/store/ingest.js';
import { outboxRangeOf, outboxIdOf } from '../../src/store/layout.js';
import { Outbox } from '../../src/store/outbox.js';
import { resultColumns } from '../../src/store/stored-result.js';
import { potassium } from '../fixtures/results.js';

/** A plausible potassium result; `i` varies the accession so every index is a new key. */
export function sampleResult(i: number, over: Partial<KeyedResult> = {}): KeyedResult {
  return potassium(`A${String(i).padStart(7, '0')}`, {
    source: { gatewayId: 'gw-test', driver: 'astm', analyzerCode: 'K', captureId: 1 },
    ...over,
  });
}

/** A store database of its own, with the Outbox on a settable clock. */
export interface TestStore {
  dir: string;
  db: Database.Database;
  outbox: Outbox;
  clock: { now: number };
  close(): void;
}

/** Opens a fresh store database in a temporary directory. */
export function testStore(dir = mkdtempSync(join(tmpdir(), 'labgate-outbox-'))): TestStore {
  const db = openDatabase(join(dir, 'labgate.db'), 5_000);
  const clock = { now: Date.UTC(2026, 6, 1, 15) };
  return {
    dir,
    db,
    outbox: new Outbox(db, () => clock.now),
    clock,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Inserts one pending outbox row per result for `sink`, as ingest does, due at `dueAt`: the result (with its payload)
 * once, the row in the result's next free slot. Returns the keys.
 */
export function enqueue(db: Database.Database, sink: string, results: readonly KeyedResult[], dueAt: number): string[] {
  const upsert = db.prepare(INSERT_RESULT);
  const used = db.prepare('SELECT COUNT(*) FROM outbox WHERE id BETWEEN ? AND ?').pluck();
  const insert = db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, attempts, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`);
  const keys: string[] = [];
  db.transaction(() => {
    for (const r of results) {
      const payload = buildPayload(r, { receivedAt: dueAt, rawSha256: 'f'.repeat(64) });
      const json = JSON.stringify(payload);
      const columns = resultColumns(r, payload.dedupKey, payload.recordId, clinicalDigest(r), dueAt, json, sha256Hex(json));
      const { id } = upsert.get(columns) as { id: number };
      const slot = used.get(...outboxRangeOf(id)) as number;
      insert.run(outboxIdOf(id, slot), sink, payload.dedupKey, dueAt, dueAt, dueAt);
      keys.push(payload.dedupKey);
    }
  })();
  return keys;
}

/** Outbox state counts of one sink. */
export function states(db: Database.Database, sink: string): Record<string, number> {
  const rows = db.prepare('SELECT state, COUNT(*) AS n FROM outbox WHERE sink = ? GROUP BY state').all(sink) as { state: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}
