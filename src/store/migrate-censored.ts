// Store migration 3: results keep the analyzer's status letter (`status_code`) and a censored value's bound (`bound`).
// Results stored before it held `<0.5` with value 0.5; they are rewritten in today's form (value null, bound 0.5), with
// their clinical digest and payload, so a replay after the upgrade is absorbed, not taken for a conflict, and a row
// still waiting in the outbox reaches the sinks without a number. Their status letter was not kept: it stays null.
import { hash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ResultPayload } from '../payload.js';
import { clinicalDigest, upgradeStoredResult, type StoredKeyedResult } from '../result.js';

const BATCH = 500;

/** Adds the two columns and rewrites every stored censored result (in batches: memory stays flat). */
export function keepStatusCodeAndBound(db: Database.Database): void {
  db.exec('ALTER TABLE results ADD COLUMN status_code TEXT; ALTER TABLE results ADD COLUMN bound REAL;');
  const next = db.prepare('SELECT id, payload FROM results WHERE id > ? AND comparator IS NOT NULL AND value IS NOT NULL ORDER BY id LIMIT ?');
  const rewrite = db.prepare('UPDATE results SET value = NULL, bound = ?, clinical_digest = ?, payload = ?, payload_sha256 = ? WHERE id = ?');
  let after = 0;
  for (;;) {
    const rows = next.all(after, BATCH) as { id: number; payload: string }[];
    if (rows.length === 0) return;
    for (const row of rows) {
      const stored = JSON.parse(row.payload) as Omit<ResultPayload, 'result'> & { result: StoredKeyedResult };
      const result = upgradeStoredResult(stored.result);
      const payload = JSON.stringify({ ...stored, result } satisfies ResultPayload);
      rewrite.run(result.bound, clinicalDigest(result), payload, hash('sha256', payload), row.id);
    }
    after = rows[rows.length - 1]!.id;
  }
}
