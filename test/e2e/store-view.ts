// The gateway's SQLite store as the test sees it, read-only beside (or after) the gateway child.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** What the test reads from the gateway's SQLite store (read-only; fine beside a running gateway in WAL mode). */
export interface StoreView {
  integrity: string;
  captures: { id: number; status: string; resultCount: number }[];
  results: { dedupKey: string; recordId: string; accession: string; captureId: number }[];
  outbox: { sink: string; dedupKey: string; state: string }[];
}

/** Reads the store; an absent database reads as empty. */
export function readStore(dataDir: string): StoreView {
  const path = join(dataDir, 'labgate.db');
  if (!existsSync(path)) return { integrity: 'ok', captures: [], results: [], outbox: [] };
  const db = new Database(path, { readonly: true, timeout: 5_000 });
  try {
    return {
      integrity: db.pragma('integrity_check', { simple: true }) as string,
      captures: db.prepare('SELECT id, status, result_count AS resultCount FROM captures ORDER BY id').all() as StoreView['captures'],
      results: db
        .prepare('SELECT dedup_key AS dedupKey, record_id AS recordId, accession, capture_id AS captureId FROM results ORDER BY id')
        .all() as StoreView['results'],
      outbox: db.prepare('SELECT sink, dedup_key AS dedupKey, state FROM outbox ORDER BY id').all() as StoreView['outbox'],
    };
  } finally {
    db.close();
  }
}
