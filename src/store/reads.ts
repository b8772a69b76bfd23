// What the status page and the CLI read. Never raw captures; the results table holds no demographics.
import type Database from 'better-sqlite3';
import type { ResultStatus } from '../result.js';
import { OUTBOX_SLOTS } from './layout.js';
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
  /** The analyzer's own status letter; null when it sent none (or the result predates store migration 3). */
  statusCode: string | null;
  flags: string[];
  referenceRange: string | null;
  /** The analyzer's own test code the result was mapped from. */
  analyzerCode: string;
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

/**
 * Names a stored result without an index on dedup_key alone (one would cost ingest a random page per result):
 * by its resulted_at (the key's leading index column), or by one of its outbox rows.
 */
export type ResultRef = { dedupKey: string; resultedAt: string } | { dedupKey: string; outboxId: number };

/** Where a result stands in one sink's outbox. */
export interface SinkDelivery {
  sink: string;
  state: 'pending' | 'sent' | 'dead' | 'conflict';
}

/** The delivery-state query (exported so a test can EXPLAIN it): one parameter, a JSON array of [key, resulted_at]. */
// A result's outbox rows are the rowid range of its slots (layout.ts); the key check keeps a row
// written any other way (an older database) from being taken for another result's.
export const DELIVERY_SQL = `SELECT r.dedup_key AS key, o.sink, o.state
  FROM json_each(?) AS j
  JOIN results r ON r.resulted_at = j.value ->> 1 AND r.dedup_key = j.value ->> 0
  JOIN outbox o ON o.id BETWEEN r.id * ${OUTBOX_SLOTS} AND r.id * ${OUTBOX_SLOTS} + ${OUTBOX_SLOTS - 1} AND o.dedup_key = r.dedup_key
  ORDER BY o.id`;

/** Read-only queries, prepared once. */
export class StoreReads {
  private readonly countAll: Database.Statement;
  private readonly countQueues: Database.Statement;
  private readonly recent: Database.Statement;
  private readonly conflicts: Database.Statement;
  private readonly delivery: Database.Statement;
  private readonly resultAt: Database.Statement;
  private readonly resultOfRow: Database.Statement;

  constructor(db: Database.Database) {
    // Each count is served by an index (the partial ones for rejected captures and open conflicts).
    this.countAll = db.prepare(`SELECT
      (SELECT COUNT(*) FROM results) AS results,
      (SELECT COUNT(*) FROM captures) AS captures,
      (SELECT COUNT(*) FROM captures WHERE status = 'rejected') AS rejected,
      (SELECT COUNT(*) FROM conflicts WHERE resolution IS NULL) AS open_conflicts`);
    this.countQueues = db.prepare(`SELECT (SELECT COUNT(*) FROM captures WHERE status = 'rejected') AS rejectedCaptures,
      (SELECT COUNT(*) FROM conflicts WHERE resolution IS NULL) AS conflicts`);
    this.recent = db.prepare('SELECT * FROM results ORDER BY id DESC LIMIT ?');
    this.conflicts = db.prepare('SELECT * FROM conflicts WHERE resolution IS NULL ORDER BY id LIMIT ?');
    this.delivery = db.prepare(DELIVERY_SQL);
    this.resultAt = db.prepare(`SELECT accession, analyte_loinc AS analyteLoinc FROM results WHERE resulted_at = ? AND dedup_key = ?`);
    this.resultOfRow = db.prepare(
      `SELECT accession, analyte_loinc AS analyteLoinc FROM results WHERE id = CAST(? AS INTEGER) / ${OUTBOX_SLOTS} AND dedup_key = ?`,
    );
  }

  /** Outbox state per sink of each result, in one query; a result with no outbox row (QC, no sinks) is absent. */
  deliveryStates(results: readonly { dedupKey: string; resultedAt: string }[]): Map<string, SinkDelivery[]> {
    const refs = JSON.stringify(results.map((r) => [r.dedupKey, r.resultedAt]));
    const states = new Map<string, SinkDelivery[]>();
    for (const row of this.delivery.all(refs) as { key: string; sink: string; state: SinkDelivery['state'] }[]) {
      const list = states.get(row.key) ?? [];
      list.push({ sink: row.sink, state: row.state });
      states.set(row.key, list);
    }
    return states;
  }

  /** Accession and LOINC of a stored result, or undefined when it is not (any more) stored. */
  resultOf(ref: ResultRef): { accession: string; analyteLoinc: string } | undefined {
    const row = 'resultedAt' in ref ? this.resultAt.get(ref.resultedAt, ref.dedupKey) : this.resultOfRow.get(ref.outboxId, ref.dedupKey);
    return row as { accession: string; analyteLoinc: string } | undefined;
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

  /** How many rejected captures and open conflicts wait for a person (the page lists the oldest of each). */
  queueCounts(): { rejectedCaptures: number; conflicts: number } {
    return this.countQueues.get() as { rejectedCaptures: number; conflicts: number };
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
      statusCode: r.status_code,
      flags: JSON.parse(r.flags) as string[],
      referenceRange: r.reference_range,
      analyzerCode: r.analyzer_code,
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
