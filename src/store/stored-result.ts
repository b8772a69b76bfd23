// A results row and the keyed result it was made from, both ways, so a conflict can show the stored version
// in exactly the payload form the outbox carries.
// The provenance (`source`) is written once, in the payload: from store schema 10 on, a first insert leaves the source
// column empty ('', the column is NOT NULL), and reading a row takes the payload's. Its 70-odd bytes a result made a
// results page hold three rows instead of four: a sixth of the pages every ingest commit writes, and checkpoints copy.
// Rows stored earlier, and a person's forwarded correction (conflict-resolution.ts), still carry it in the column.
import type { ResultPayload } from '../payload.js';
import type { KeyedResult } from '../result.js';

/** One `results` row as SQLite returns it. */
export interface ResultRow {
  id: number;
  dedup_key: string;
  record_id: string;
  accession: string;
  analyte_loinc: string;
  instrument_id: string;
  resulted_at: string;
  value_text: string;
  value: number | null;
  comparator: string | null;
  unit: string | null;
  status: string;
  flags: string;
  reference_range: string | null;
  qc: number;
  /** JSON provenance, or '' when it is the payload's `result.source` (first inserts from store schema 10 on). */
  source: string;
  analyzer_code: string;
  clinical_digest: string;
  capture_id: number;
  load_count: number;
  first_seen_at: number;
  last_seen_at: number;
  payload: string;
  payload_sha256: string;
  /** Migration 3: null on rows stored before it. */
  status_code: string | null;
  bound: number | null;
}

/** The columns of a first insert, in the order of the ingest INSERT statement; `r.source` already names the capture and goes in `payload` only. */
export function resultColumns(r: KeyedResult, key: string, recordId: string, digest: string, now: number, payload: string, payloadSha256: string): unknown[] {
  return [
    key,
    recordId,
    r.accession,
    r.analyteLoinc,
    r.instrumentId,
    r.resultedAt,
    r.valueText,
    r.value,
    r.comparator,
    r.unit,
    r.status,
    JSON.stringify(r.flags),
    r.referenceRange,
    r.qc ? 1 : 0,
    '',
    r.source.analyzerCode,
    digest,
    r.source.captureId,
    now,
    now,
    payload,
    payloadSha256,
    r.statusCode,
    r.bound,
  ];
}

/** Rebuilds the keyed result a row was stored from, fields in schema order so its payload JSON is byte-identical. */
export function rowToResult(row: ResultRow): KeyedResult {
  return {
    accession: row.accession,
    analyteLoinc: row.analyte_loinc,
    instrumentId: row.instrument_id,
    resultedAt: row.resulted_at,
    valueText: row.value_text,
    value: row.value,
    comparator: row.comparator as KeyedResult['comparator'],
    bound: row.bound,
    unit: row.unit,
    status: row.status as KeyedResult['status'],
    statusCode: row.status_code,
    flags: JSON.parse(row.flags) as string[],
    referenceRange: row.reference_range,
    qc: row.qc === 1,
    source: sourceOf(row),
  };
}

// The payload holds the provenance the row was stored with, the very object the column would have held.
function sourceOf(row: ResultRow): KeyedResult['source'] {
  if (row.source !== '') return JSON.parse(row.source) as KeyedResult['source'];
  return (JSON.parse(row.payload) as ResultPayload).result.source;
}

/** Names the clinical fields on which two versions of one result differ (for the conflict's reason). */
export function differingFields(stored: KeyedResult, incoming: KeyedResult): string[] {
  const fields: string[] = [];
  if (stored.valueText.trim() !== incoming.valueText.trim() || stored.value !== incoming.value) fields.push('value');
  if (stored.comparator !== incoming.comparator) fields.push('comparator');
  if ((stored.unit ?? null) !== (incoming.unit ?? null)) fields.push('unit');
  if (stored.status !== incoming.status) fields.push('status');
  if ([...stored.flags].sort().join('\u0000') !== [...incoming.flags].sort().join('\u0000')) fields.push('flags');
  return fields;
}
