// The one statement per batch: unnest the batch's payloads, upsert them into result_load, and append one audit row
// per result in the same statement (hence the same transaction). A replay (same clinical content) is absorbed with
// load_count + 1; different content under the same key is not updated, so it is missing from RETURNING: a conflict.
// The payload JSON (payload.ts, ResultPayload) is sent as is and read by the server: the gateway, a Raspberry Pi,
// spends no CPU taking it apart, and a payload the server cannot read fails like any other data error.
import { quoteIdent } from './postgres-schema.js';

/** One result to load: its key, its stored payload JSON, and the attempt number for the audit row. */
export type LoadRow = { key: string; payload: string; attempt: number };

/** Parameters of the batch statement, in order: keys, payloads as one JSON array text, attempts, gateway id. */
export function batchParams(rows: readonly LoadRow[], gatewayId: string): unknown[] {
  // Joined rather than sent as text[]: an array literal would escape every quote of every payload on the gateway.
  return [rows.map((r) => r.key), `[${rows.map((r) => r.payload).join(',')}]`, rows.map((r) => r.attempt), gatewayId];
}

/** The batch upsert + audit statement for `schema`. Returns one row per input: dedup_key, inserted, conflict. */
export function batchStatement(schema: string): string {
  const s = quoteIdent(schema);
  return `WITH input AS (
  SELECT k AS dedup_key, a AS attempt, p->'result' AS res, (p->>'recordId')::uuid AS record_id
  FROM ROWS FROM (unnest($1::text[]), jsonb_array_elements($2::jsonb), unnest($3::int[])) AS t(k, p, a)
), up AS (
  INSERT INTO ${s}.result_load AS r (dedup_key, accession, analyte_loinc, instrument_id, resulted_at, value, unit,
    value_text, comparator, status, flags, reference_range, record_id, source_gateway, first_loaded_at, last_loaded_at)
  SELECT dedup_key, res->>'accession', res->>'analyteLoinc', res->>'instrumentId', (res->>'resultedAt')::timestamptz,
    (res->>'value')::float8, res->>'unit', res->>'valueText', res->>'comparator', res->>'status', res->'flags',
    res->>'referenceRange', record_id, $4, now(), now()
  FROM input
  ON CONFLICT (dedup_key) DO UPDATE SET load_count = r.load_count + 1, last_loaded_at = now()
  -- invariant 4: only the same clinical content is a replay (result.ts clinicalContent: value text, value,
  -- comparator, unit, status, flags as a set). Rows loaded before labgate (value_text NULL) compare value and unit.
  WHERE r.value IS NOT DISTINCT FROM EXCLUDED.value AND r.unit IS NOT DISTINCT FROM EXCLUDED.unit
    AND (r.value_text IS NULL OR (btrim(r.value_text) = btrim(EXCLUDED.value_text)
      AND r.comparator IS NOT DISTINCT FROM EXCLUDED.comparator AND r.status IS NOT DISTINCT FROM EXCLUDED.status
      AND coalesce(r.flags, '[]') @> EXCLUDED.flags AND EXCLUDED.flags @> coalesce(r.flags, '[]')))
  RETURNING r.dedup_key, (r.xmax = 0) AS inserted
), audit AS (
  INSERT INTO ${s}.result_load_audit (dedup_key, outcome, gateway_id, attempt)
  SELECT i.dedup_key, CASE WHEN up.dedup_key IS NULL THEN 'conflict' WHEN up.inserted THEN 'inserted' ELSE 'absorbed' END, $4, i.attempt
  FROM input i LEFT JOIN up ON up.dedup_key = i.dedup_key
)
SELECT i.dedup_key, coalesce(up.inserted, false) AS inserted, up.dedup_key IS NULL AS conflict
FROM input i LEFT JOIN up ON up.dedup_key = i.dedup_key`;
}

/** The stored clinical content of conflicting keys, to report beside the conflict. */
export function storedVersionsStatement(schema: string): string {
  return `SELECT dedup_key, value_text, value, comparator, unit, status, flags, reference_range, source_gateway, load_count
FROM ${quoteIdent(schema)}.result_load WHERE dedup_key = ANY($1::bpchar[])`;
}
