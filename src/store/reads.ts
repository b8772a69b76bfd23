// What the status page and the CLI read. Never raw captures; the results table holds no demographics.
import type Database from 'better-sqlite3';
import type { ResultStatus } from '../result.js';
import type { ResultRow } from './stored-result.js';

/** Totals for the status page. */
export interface StoreCounts {
  results: number;
  capturesAccepted: number;
  capturesRejected: number;
  openConflicts: number;
}

/** A stored result as the status page shows it. */
export interface RecentResult {
  dedupKey: string;
  recordId: string;
  accession: string;
  analyteLoinc: string;
  instrumentId: string;
  resultedAt: string;
  valueText: string;
  unit: string | null;
  status: ResultStatus;
  flags: string[];
  qc: boolean;
  loadCount: number;
  firstSeenAt: number;
  lastSeenAt: number;
}

/** A conflict waiting for a person. Payloads are ResultPayload JSON (or what a sink reported holding). */
export interface OpenConflict {
  id: number;
  dedupKey: string;
  origin: string;
  reason: string;
  detectedAt: number;
  occurrences: number;
  captureId: number | null;
  storedPayload: string;
  incomingPayload: string;
}

/** Read-only queries, prepared once. */
export class StoreReads {
  private readonly countAll: Database.Statement;
  private readonly recent: Database.Statement;
  private readonly conflicts: Database.Statement;

  constructor(db: Database.Database) {
    // Each count is served by an index (the partial ones for rejected captures and open conflicts).
    this.countAll = db.prepare(`SELECT
      (SELECT COUNT(*) FROM results) AS results,
      (SELECT COUNT(*) FROM captures) AS captures,
      (SELECT COUNT(*) FROM captures WHERE status = 'rejected') AS rejected,
      (SELECT COUNT(*) FROM conflicts WHERE resolution IS NULL) AS open_conflicts`);
    this.recent = db.prepare('SELECT * FROM results ORDER BY id DESC LIMIT ?');
    this.conflicts = db.prepare('SELECT * FROM conflicts WHERE resolution IS NULL ORDER BY id LIMIT ?');
  }

  /** Totals of results, captures and open conflicts. */
  counts(): StoreCounts {
    const row = this.countAll.get() as { results: number; captures: number; rejected: number; open_conflicts: number };
    return {
      results: row.results,
      capturesAccepted: row.captures - row.rejected,
      capturesRejected: row.rejected,
      openConflicts: row.open_conflicts,
    };
  }

  /** The most recently first-seen results, newest first. */
  recentResults(limit: number): RecentResult[] {
    return (this.recent.all(limit) as ResultRow[]).map((r) => ({
      dedupKey: r.dedup_key,
      recordId: r.record_id,
      accession: r.accession,
      analyteLoinc: r.analyte_loinc,
      instrumentId: r.instrument_id,
      resultedAt: r.resulted_at,
      valueText: r.value_text,
      unit: r.unit,
      status: r.status as ResultStatus,
      flags: JSON.parse(r.flags) as string[],
      qc: r.qc === 1,
      loadCount: r.load_count,
      firstSeenAt: r.first_seen_at,
      lastSeenAt: r.last_seen_at,
    }));
  }

  /** Unresolved conflicts, oldest first. */
  openConflicts(limit: number): OpenConflict[] {
    const rows = this.conflicts.all(limit) as {
      id: number;
      dedup_key: string;
      origin: string;
      reason: string;
      detected_at: number;
      occurrences: number;
      capture_id: number | null;
      stored_payload: string;
      incoming_payload: string;
    }[];
    return rows.map((c) => ({
      id: c.id,
      dedupKey: c.dedup_key,
      origin: c.origin,
      reason: c.reason,
      detectedAt: c.detected_at,
      occurrences: c.occurrences,
      captureId: c.capture_id,
      storedPayload: c.stored_payload,
      incomingPayload: c.incoming_payload,
    }));
  }
}
