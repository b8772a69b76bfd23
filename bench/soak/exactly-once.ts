// The soak's last figure: every result an analyzer got an ACK for is in PostgreSQL and in the LIMS exactly once,
// and neither holds a result the gateway did not store. Read after the gateway drained and stopped.
import type pg from 'pg';
import { recordId } from '../../src/result.js';
import type { LimsChild } from '../../test/e2e/harness.js';
import { readStore } from '../../test/e2e/store-view.js';

/** What was counted and compared; `ok` when nothing is lost, doubled or unexplained. */
export interface ExactlyOnce {
  ok: boolean;
  acked: number;
  stored: number;
  pgRows: number;
  limsRecords: number;
  /** ACKed but missing from PostgreSQL or the LIMS. */
  lost: number;
  /** More than one result_load row or 'inserted' audit per key, or a LIMS record applied twice. */
  doubled: number;
  /** In a sink but not in the store. */
  unexplained: number;
  notSent: number;
}

/** Compares the ACKed keys with the store, result_load (and its audit) and the LIMS test server. */
export async function checkExactlyOnce(acked: readonly string[], dataDir: string, pool: pg.Pool, schema: string, lims: LimsChild): Promise<ExactlyOnce> {
  const view = readStore(dataDir);
  const stored = new Set(view.results.map((r) => r.dedupKey));
  const count = async (sql: string): Promise<Map<string, number>> =>
    new Map((await pool.query<{ k: string; n: string }>(sql)).rows.map((r) => [r.k.trim(), Number(r.n)]));
  const rows = await count(`SELECT dedup_key AS k, count(*) AS n FROM "${schema}".result_load GROUP BY dedup_key`);
  const inserts = await count(`SELECT dedup_key AS k, count(*) AS n FROM "${schema}".result_load_audit WHERE outcome = 'inserted' GROUP BY dedup_key`);
  const stats = await lims.stats();
  const missingInLims = await missingRecords(acked, lims);
  const lost = acked.filter((k) => !rows.has(k) || !stored.has(k)).length + missingInLims;
  const doubled = [...rows.values(), ...inserts.values()].filter((n) => n !== 1).length + Math.max(0, stats.applied - stats.records);
  const unexplained = [...rows.keys()].filter((k) => !stored.has(k)).length + Math.abs(stats.records - stored.size);
  const notSent = view.outbox.filter((o) => o.state !== 'sent').length;
  return {
    ok: lost === 0 && doubled === 0 && unexplained === 0 && notSent === 0 && rows.size === stored.size && inserts.size === stored.size,
    acked: acked.length,
    stored: stored.size,
    pgRows: rows.size,
    limsRecords: stats.records,
    lost,
    doubled,
    unexplained,
    notSent,
  };
}

// Each ACKed key's record, asked of the LIMS by its id, a few at a time.
async function missingRecords(keys: readonly string[], lims: LimsChild): Promise<number> {
  let missing = 0;
  for (let i = 0; i < keys.length; i += 16) {
    const statuses = await Promise.all(keys.slice(i, i + 16).map((k) => lims.recordStatus(recordId(k))));
    missing += statuses.filter((s) => s !== 200).length;
  }
  return missing;
}
