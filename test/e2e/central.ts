// The two sinks' side of "exactly once": rows in the central PostgreSQL and records in the LIMS test server.
import { expect } from 'vitest';
import { testDatabase, type TestDatabase } from '../postgres/pg.js';
import type { FhirChild } from './fhir-child.js';
import type { LimsChild } from './harness.js';
import type { StoreView } from './store-view.js';

/** A migrated PostgreSQL schema of the test's own (LABGATE_TEST_PG_URL, or the embedded PGlite). */
export async function centralDatabase(): Promise<TestDatabase> {
  return testDatabase();
}

/** result_load rows and 'inserted' audit entries per key. Call it with the gateway stopped (PGlite: one connection). */
export async function centralRows(db: TestDatabase): Promise<{ rows: Map<string, number>; inserts: Map<string, number> }> {
  const rows = await db.pool.query<{ dedup_key: string; n: string }>(`SELECT dedup_key, count(*) AS n FROM "${db.schema}".result_load GROUP BY dedup_key`);
  const audit = await db.pool.query<{ dedup_key: string; n: string }>(
    `SELECT dedup_key, count(*) AS n FROM "${db.schema}".result_load_audit WHERE outcome = 'inserted' GROUP BY dedup_key`,
  );
  return {
    rows: new Map(rows.rows.map((r) => [r.dedup_key.trim(), Number(r.n)])),
    inserts: new Map(audit.rows.map((r) => [r.dedup_key.trim(), Number(r.n)])),
  };
}

/**
 * Every result in the store is in both sinks exactly once: one result_load row and one 'inserted' audit entry per
 * key and no other keys; the LIMS holds one record per result, each applied once (applied = records = results).
 * Call it with the gateway stopped.
 */
export async function expectDeliveredOnce(view: StoreView, db: TestDatabase, lims: LimsChild): Promise<void> {
  const keys = view.results.map((r) => r.dedupKey);
  expect(new Set(keys).size, 'one store row per key').toBe(keys.length);
  expect(
    view.outbox.filter((o) => o.state !== 'sent'),
    'every outbox row sent',
  ).toEqual([]);
  const central = await centralRows(db);
  expect([...central.rows.keys()].sort(), 'result_load holds exactly the stored keys').toEqual([...keys].sort());
  expect(
    [...central.rows.values()].every((n) => n === 1),
    'one result_load row per key',
  ).toBe(true);
  expect([...central.inserts.keys()].sort(), 'one insert audited per key').toEqual([...keys].sort());
  expect(
    [...central.inserts.values()].every((n) => n === 1),
    'no key inserted twice',
  ).toBe(true);
  const stats = await lims.stats();
  expect({ records: stats.records, applied: stats.applied }, 'LIMS: every record applied exactly once').toEqual({ records: keys.length, applied: keys.length });
  const statuses = await Promise.all(view.results.map((r) => lims.recordStatus(r.recordId)));
  expect(
    statuses.filter((s) => s !== 200),
    'every stored result is a LIMS record',
  ).toEqual([]);
}

/**
 * The FHIR server holds one Observation per stored result, identified by its key, each at its first version (a
 * re-send after a crash found it and changed nothing), and no other. Call it with the gateway stopped.
 */
export async function expectOneObservationEach(view: StoreView, fhir: FhirChild): Promise<void> {
  const keys = view.results.map((r) => r.dedupKey);
  const census = await fhir.census();
  expect(Object.keys(census.perIdentifier).sort(), 'the FHIR server holds exactly the stored keys').toEqual([...keys].sort());
  expect(
    Object.entries(census.perIdentifier).filter(([, n]) => n !== 1),
    'no duplicate Observation',
  ).toEqual([]);
  expect(census.observations, 'one Observation per result').toBe(keys.length);
  expect(
    Object.values(census.versions).filter((n) => n !== 1),
    'none rewritten by a re-send',
  ).toEqual([]);
}
