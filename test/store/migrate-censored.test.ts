// Store migration 3 against a database written by the previous version: it held `<0.5` with value 0.5 and kept no
// status letter. After the upgrade the row says what the analyzer said, its pending outbox row carries no number,
// and a replay of the same result is absorbed, not taken for a conflict.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { buildPayload, sha256Hex } from '../../src/payload.js';
import { clinicalDigest, type KeyedResult } from '../../src/result.js';
import { migrate } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations.js';
import { message, result, scratchPerTest } from './store-fixtures.js';
import { outboxIdOf, resultIdSql } from '../../src/store/layout.js';

const fresh = scratchPerTest();

// A result as labgate stored it before migration 3: no bound, no statusCode, and a censored value with a number.
function previousForm(n: number, valueText: string, value: number, comparator: '<' | '>' | null): Record<string, unknown> {
  const { bound: _bound, statusCode: _statusCode, ...rest } = result(n, { valueText, value: null, comparator: null, bound: null });
  return { ...rest, value, comparator, source: { ...rest.source, captureId: 1 } };
}

function writePreviousVersion(dataDir: string, rows: Record<string, unknown>[]): void {
  const db = new Database(join(dataDir, 'labgate.db'));
  db.pragma('journal_mode = WAL');
  migrate(db, migrations.slice(0, 2));
  db.prepare(
    `INSERT INTO captures (id, instrument_id, protocol, received_at, raw, raw_sha256, status, processed_at)
    VALUES (1, 'chem-1', 'astm', 0, x'00', '', 'accepted', 0)`,
  ).run();
  const insert = db.prepare(`INSERT INTO results (dedup_key, record_id, accession, analyte_loinc, instrument_id, resulted_at, value_text,
    value, comparator, unit, status, flags, reference_range, qc, source, analyzer_code, clinical_digest, capture_id, first_seen_at,
    last_seen_at, payload, payload_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0, 0, ?, ?)`);
  for (const [i, r] of rows.entries()) {
    const payload = buildPayload(r as unknown as KeyedResult, { receivedAt: 0, rawSha256: '' });
    const json = JSON.stringify(payload);
    // The digest the previous version computed: the number of a censored value included.
    const digest = sha256Hex(JSON.stringify([r.valueText, r.value, r.comparator, r.unit, r.status, []]));
    insert.run(
      payload.dedupKey,
      payload.recordId,
      r.accession,
      r.analyteLoinc,
      r.instrumentId,
      r.resultedAt,
      r.valueText,
      r.value,
      r.comparator,
      r.unit,
      r.status,
      '[]',
      r.referenceRange,
      0,
      JSON.stringify(r.source),
      'K',
      digest,
      json,
      sha256Hex(json),
    );
    db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, next_attempt_at, created_at, updated_at) VALUES (?, 'postgres', ?, 'pending', 0, 0, 0)`).run(
      outboxIdOf(i + 1, 0),
      payload.dedupKey,
    );
  }
  db.close();
}

it('moves a stored censored value to bound, rewrites its digest and payload, and leaves exact values alone', () => {
  const s = fresh();
  writePreviousVersion(s.dataDir, [previousForm(1, '<0.5', 0.5, '<'), previousForm(2, '4.1', 4.1, null)]);
  const store = s.open();
  const rows = store.db.prepare('SELECT value_text, value, comparator, bound, status_code, clinical_digest, payload FROM results ORDER BY id').all() as {
    value_text: string;
    value: number | null;
    comparator: string | null;
    bound: number | null;
    status_code: string | null;
    clinical_digest: string;
    payload: string;
  }[];
  expect(rows.map((r) => [r.value_text, r.value, r.comparator, r.bound, r.status_code])).toEqual([
    ['<0.5', null, '<', 0.5, null],
    ['4.1', 4.1, null, null, null],
  ]);
  const censored = JSON.parse(rows[0]!.payload) as { result: KeyedResult };
  expect(censored.result).toMatchObject({ valueText: '<0.5', value: null, comparator: '<', bound: 0.5, statusCode: null });
  expect(rows[0]!.clinical_digest).toBe(clinicalDigest(censored.result));
  // The row still waiting for PostgreSQL is sent the rewritten payload.
  const claimed = store.db
    .prepare(`SELECT r.payload, r.payload_sha256 FROM outbox JOIN results r ON r.id = ${resultIdSql('outbox.id')} WHERE outbox.id = ${outboxIdOf(1, 0)}`)
    .get() as { payload: string; payload_sha256: string };
  expect(claimed.payload).toBe(rows[0]!.payload);
  expect(claimed.payload_sha256).toBe(sha256Hex(claimed.payload));
});

it('absorbs a replay of a censored result stored by the previous version', () => {
  const s = fresh();
  writePreviousVersion(s.dataDir, [previousForm(1, '<0.5', 0.5, '<')]);
  const store = s.open();
  const replay = result(1, { valueText: '<0.5', value: null, comparator: '<', bound: 0.5 });
  expect(store.ingest(message([replay]))).toMatchObject({ inserted: 0, absorbed: 1, conflicts: 0 });
  expect(store.counts().openConflicts).toBe(0);
});

it('stores the status letter and the bound of a new result', () => {
  const store = fresh().open();
  store.ingest(message([result(1, { valueText: '>2000', value: null, comparator: '>', bound: 2000, status: 'preliminary', statusCode: 'W' })]));
  expect(store.db.prepare('SELECT value, comparator, bound, status, status_code FROM results').get()).toEqual({
    value: null,
    comparator: '>',
    bound: 2000,
    status: 'preliminary',
    status_code: 'W',
  });
});
