// The one statement per batch: unnest the batch's payloads, upsert them into result_load, and append one audit row
// per result in the same statement (hence the same transaction). A replay (same clinical content) is absorbed with
// load_count + 1; different content under the same key is not updated, so it is missing from RETURNING: a conflict.
// A correction a person forwarded (payload `supersedes`, payload.ts) is a compare-and-set: it replaces the stored
// clinical content only while that content is still the version it names; any other version stays a conflict.
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

/**
 * Whether a payload may carry `supersedes`. A plain substring test (this runs for every row on the Pi): it finds the
 * member name however the JSON is spaced; its only false positive, a string value "supersedes", merely selects the
 * correcting statement, which loads a row without `supersedes` exactly as the plain one does.
 */
export function mayCorrect(payload: string): boolean {
  return payload.includes('"supersedes"');
}

// invariant 4: only the same clinical content is a replay (result.ts clinicalContent: value text, value, comparator,
// unit, status, flags as a set). Rows loaded before labgate (value_text NULL) compare value and unit.
const sameAsIncoming = `r.value IS NOT DISTINCT FROM EXCLUDED.value AND r.unit IS NOT DISTINCT FROM EXCLUDED.unit
    AND (r.value_text IS NULL OR (btrim(r.value_text) = btrim(EXCLUDED.value_text)
      AND r.comparator IS NOT DISTINCT FROM EXCLUDED.comparator AND r.status IS NOT DISTINCT FROM EXCLUDED.status
      AND coalesce(r.flags, '[]') @> EXCLUDED.flags AND EXCLUDED.flags @> coalesce(r.flags, '[]')))`;

// The same comparison against `supersedes`, the JSON array clinicalContent() renders:
// [valueText trimmed, value, comparator, unit, status, flags sorted].
const sameAsSuperseded = `r.value IS NOT DISTINCT FROM (i.sup->>1)::float8 AND r.unit IS NOT DISTINCT FROM i.sup->>3
    AND (r.value_text IS NULL OR (btrim(r.value_text) = btrim(i.sup->>0)
      AND r.comparator IS NOT DISTINCT FROM i.sup->>2 AND r.status IS NOT DISTINCT FROM i.sup->>4
      AND coalesce(r.flags, '[]') @> (i.sup->5) AND (i.sup->5) @> coalesce(r.flags, '[]')))`;

/**
 * The batch upsert + audit statement for `schema`. Returns one row per input: dedup_key, inserted, corrected,
 * conflict. With `corrections`, rows whose payload carries `supersedes` may be corrected; the plain statement (the
 * hot path) never updates a clinical column, so a role without those grants keeps loading.
 */
export function batchStatement(schema: string, options: { corrections?: boolean } = {}): string {
  const s = quoteIdent(schema);
  const corrections = options.corrections === true;
  return `WITH input AS (
  SELECT k AS dedup_key, a AS attempt, p->'result' AS res, (p->>'recordId')::uuid AS record_id${
    corrections
      ? `,
    (p->>'supersedes')::jsonb AS sup`
      : ''
  }
  FROM ROWS FROM (unnest($1::text[]), jsonb_array_elements($2::jsonb), unnest($3::int[])) AS t(k, p, a)
), up AS (
  INSERT INTO ${s}.result_load AS r (dedup_key, accession, analyte_loinc, instrument_id, resulted_at, value, unit,
    value_text, comparator, bound, status, status_code, flags, reference_range, record_id, source_gateway, first_loaded_at,
    last_loaded_at)
  SELECT dedup_key, res->>'accession', res->>'analyteLoinc', res->>'instrumentId', (res->>'resultedAt')::timestamptz,
    (res->>'value')::float8, res->>'unit', res->>'valueText', res->>'comparator', (res->>'bound')::float8, res->>'status',
    res->>'statusCode', res->'flags', res->>'referenceRange', record_id, $4, now(), now()
  FROM input
  ON CONFLICT (dedup_key) DO UPDATE SET load_count = r.load_count + 1, last_loaded_at = now()
  WHERE ${sameAsIncoming}
  RETURNING r.dedup_key, (r.xmax = 0) AS inserted
)${corrections ? correctionPart(s) : ''}, audit AS (
  INSERT INTO ${s}.result_load_audit (dedup_key, outcome, gateway_id, attempt)
  SELECT i.dedup_key, CASE ${corrections ? `WHEN fix.dedup_key IS NOT NULL THEN 'corrected' ` : ''}WHEN up.dedup_key IS NULL THEN 'conflict'
    WHEN up.inserted THEN 'inserted' ELSE 'absorbed' END, $4, i.attempt
  FROM input i LEFT JOIN up ON up.dedup_key = i.dedup_key${corrections ? ' LEFT JOIN fix ON fix.dedup_key = i.dedup_key' : ''}
)
SELECT i.dedup_key, coalesce(up.inserted, false) AS inserted, ${corrections ? 'fix.dedup_key IS NOT NULL' : 'false'} AS corrected,
  up.dedup_key IS NULL${corrections ? ' AND fix.dedup_key IS NULL' : ''} AS conflict
FROM input i LEFT JOIN up ON up.dedup_key = i.dedup_key${corrections ? ' LEFT JOIN fix ON fix.dedup_key = i.dedup_key' : ''}`;
}

// A key the upsert neither inserted nor absorbed holds other content; ON CONFLICT has locked its row, so the
// comparison below reads the version the upsert saw (READ COMMITTED re-checks a row changed since the snapshot).
// A replay of an applied correction is absorbed by the upsert and never reaches here.
function correctionPart(s: string): string {
  return `, fix AS (
  UPDATE ${s}.result_load r SET value = (i.res->>'value')::float8, unit = i.res->>'unit', value_text = i.res->>'valueText',
    comparator = i.res->>'comparator', bound = (i.res->>'bound')::float8, status = i.res->>'status',
    status_code = i.res->>'statusCode', flags = i.res->'flags',
    reference_range = i.res->>'referenceRange', source_gateway = $4, load_count = r.load_count + 1, last_loaded_at = now()
  FROM input i
  WHERE r.dedup_key = i.dedup_key::bpchar AND i.sup IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM up WHERE up.dedup_key = i.dedup_key::bpchar)
    AND ${sameAsSuperseded}
  RETURNING r.dedup_key
)`;
}

/** The stored clinical content of conflicting keys, to report beside the conflict. */
export function storedVersionsStatement(schema: string): string {
  return `SELECT dedup_key, value_text, value, comparator, unit, status, flags, reference_range, source_gateway, load_count
FROM ${quoteIdent(schema)}.result_load WHERE dedup_key = ANY($1::bpchar[])`;
}

/** A stored version as storedVersionsStatement reads it. */
export interface StoredVersion {
  value_text: string | null;
  value: number | null;
  comparator: string | null;
  unit: string | null;
  status: string | null;
  flags: unknown;
}

/**
 * What a forwarded correction puts in `supersedes` to replace this stored version: the stored columns in the form of
 * result.ts clinicalContent (reported as `supersedes` in a conflict's `theirs`).
 */
export function storedClinicalContent(v: StoredVersion): string {
  const flags = Array.isArray(v.flags) ? v.flags.filter((f): f is string => typeof f === 'string').sort() : [];
  // Value text untrimmed: the server trims both sides with btrim, which trims less than String.trim would.
  return JSON.stringify([v.value_text, v.value, v.comparator, v.unit, v.status, flags]);
}
