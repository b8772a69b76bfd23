// The central schema labgate loads into: versioned, idempotent migrations (every statement may run again on any
// version, so `pg-migrate --print` output is safe for a DBA to apply by hand). The established columns of
// result_load keep their names and types; labgate only adds columns, relaxes `value` to nullable and moves a censored
// value's bound out of `value` (migration 3).
import type { ClientBase } from 'pg';

/** A schema name safe to interpolate (also validated by the configuration schema). */
export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new RangeError(`invalid PostgreSQL identifier '${name}'`);
  return `"${name}"`;
}

/** Migration n (1-based) is centralMigrations(schema)[n - 1]; append only once released. */
export function centralMigrations(schema: string): string[] {
  const s = quoteIdent(schema);
  return [
    `CREATE TABLE IF NOT EXISTS ${s}.result_load (
  dedup_key     CHAR(64) PRIMARY KEY,
  accession     TEXT,
  analyte_loinc TEXT,
  instrument_id TEXT,
  resulted_at   TIMESTAMPTZ,
  value         DOUBLE PRECISION,
  unit          TEXT,
  loaded_at     TIMESTAMPTZ DEFAULT now(),
  load_count    INTEGER DEFAULT 1
);
ALTER TABLE ${s}.result_load
  ALTER COLUMN value DROP NOT NULL,
  ADD COLUMN IF NOT EXISTS value_text      TEXT,
  ADD COLUMN IF NOT EXISTS comparator      TEXT,
  ADD COLUMN IF NOT EXISTS status          TEXT,
  ADD COLUMN IF NOT EXISTS flags           JSONB,
  ADD COLUMN IF NOT EXISTS reference_range TEXT,
  ADD COLUMN IF NOT EXISTS record_id       UUID,
  ADD COLUMN IF NOT EXISTS source_gateway  TEXT,
  ADD COLUMN IF NOT EXISTS first_loaded_at TIMESTAMPTZ DEFAULT now(),
  ADD COLUMN IF NOT EXISTS last_loaded_at  TIMESTAMPTZ DEFAULT now();
CREATE TABLE IF NOT EXISTS ${s}.result_load_audit (
  id         BIGSERIAL   PRIMARY KEY,
  dedup_key  CHAR(64)    NOT NULL,
  outcome    TEXT        NOT NULL CHECK (outcome IN ('inserted', 'absorbed', 'conflict')),
  gateway_id TEXT        NOT NULL,
  attempt    INTEGER     NOT NULL,
  at         TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS result_load_audit_key ON ${s}.result_load_audit (dedup_key);
CREATE OR REPLACE FUNCTION ${s}.result_load_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'result_load_audit is append-only'; END $$;
DROP TRIGGER IF EXISTS result_load_audit_append_only ON ${s}.result_load_audit;
CREATE TRIGGER result_load_audit_append_only BEFORE UPDATE OR DELETE ON ${s}.result_load_audit
  FOR EACH ROW EXECUTE FUNCTION ${s}.result_load_audit_append_only();`,
    // A correction a person forwarded (compare-and-set on the clinical content) is audited as such.
    `ALTER TABLE ${s}.result_load_audit DROP CONSTRAINT IF EXISTS result_load_audit_outcome_check;
ALTER TABLE ${s}.result_load_audit ADD CONSTRAINT result_load_audit_outcome_check
  CHECK (outcome IN ('inserted', 'absorbed', 'conflict', 'corrected'));`,
    // The analyzer's own status letter beside the normalized status, and a censored value's bound in a column of its
    // own: value holds a number only when the analyzer sent exactly one. Rows loaded before this step held `<0.5` as
    // value 0.5; they are moved in place, so a consumer reading only value never takes a bound for a result.
    `ALTER TABLE ${s}.result_load
  ADD COLUMN IF NOT EXISTS status_code TEXT,
  ADD COLUMN IF NOT EXISTS bound       DOUBLE PRECISION;
UPDATE ${s}.result_load SET bound = value, value = NULL WHERE comparator IS NOT NULL AND value IS NOT NULL;`,
  ];
}

function versionTable(schema: string): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.labgate_schema_version (
  version    INTEGER PRIMARY KEY,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  applied_by TEXT NOT NULL DEFAULT current_user
);`;
}

/** The whole upgrade as one SQL script (for `pg-migrate --print`): safe to run on any version. */
export function migrationScript(schema: string): string {
  const s = quoteIdent(schema);
  const steps = centralMigrations(schema).map(
    (sql, i) => `-- migration ${i + 1}\n${sql}\nINSERT INTO ${s}.labgate_schema_version (version) VALUES (${i + 1}) ON CONFLICT DO NOTHING;`,
  );
  return ['BEGIN;', `CREATE SCHEMA IF NOT EXISTS ${s};`, versionTable(schema), ...steps, 'COMMIT;', ''].join('\n\n');
}

/** Brings the central schema up to date in one transaction; concurrent gateways serialize on an advisory lock. */
export async function migrateCentral(client: ClientBase, schema: string): Promise<{ from: number; to: number }> {
  const s = quoteIdent(schema);
  const list = centralMigrations(schema);
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('labgate central schema'))`);
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
    await client.query(versionTable(schema));
    const current = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${s}.labgate_schema_version`);
    const from = current.rows[0]?.v ?? 0;
    for (let v = from + 1; v <= list.length; v++) {
      await client.query(list[v - 1]!);
      await client.query(`INSERT INTO ${s}.labgate_schema_version (version) VALUES ($1)`, [v]);
    }
    await client.query('COMMIT');
    return { from, to: Math.max(from, list.length) };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * The least-privilege grants for the role a gateway loads as: insert results, count replays, apply forwarded
 * corrections to the clinical columns, append audit rows.
 */
export function loaderGrants(schema: string, role: string): string {
  const s = quoteIdent(schema);
  const r = quoteIdent(role);
  // SELECT on the compared columns (and xmax, for inserted-vs-absorbed) is what ON CONFLICT ... WHERE and
  // RETURNING read; nothing else of a stored result is readable. The identity columns (key, accession, analyte,
  // instrument, time, record id) and first_loaded_at can never be changed; no row can be deleted.
  return `GRANT USAGE ON SCHEMA ${s} TO ${r};
GRANT INSERT ON ${s}.result_load TO ${r};
GRANT UPDATE (load_count, last_loaded_at, value, unit, value_text, comparator, bound, status, status_code, flags, reference_range,
  source_gateway) ON ${s}.result_load TO ${r};
GRANT SELECT (dedup_key, xmax, value_text, value, comparator, unit, status, flags, reference_range, source_gateway, load_count)
  ON ${s}.result_load TO ${r};
GRANT INSERT ON ${s}.result_load_audit TO ${r};
GRANT USAGE ON SEQUENCE ${s}.result_load_audit_id_seq TO ${r};
`;
}
