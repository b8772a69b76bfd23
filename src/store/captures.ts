// The capture journal: every message's raw bytes exactly as received, accepted or rejected and why.
// Invariant 2: a message is journaled even when nothing in it could be normalized, so it can be reprocessed.
import type Database from 'better-sqlite3';
import type { Capture, Protocol, Rejection } from '../message.js';

/** A journaled capture's standing, without its raw bytes. */
export interface JournaledCapture {
  id: number;
  instrumentId: string;
  protocol: Protocol;
  receivedAt: number;
  rawSha256: string;
  status: 'accepted' | 'rejected';
  /** Dedup keys this capture has already been counted for (kept while it is rejected). */
  countedKeys: string[];
}

/** Reasons a listed rejected capture carries at most (a message of thousands of rejected results has as many). */
export const REASONS_LISTED = 10;

/** A rejected capture as an operator lists it: why, never the raw bytes. */
export interface RejectedCapture {
  id: number;
  instrumentId: string;
  protocol: Protocol;
  receivedAt: number;
  /** The first REASONS_LISTED reasons; `reasonCount` says how many it has. */
  reasons: Rejection[];
  reasonCount: number;
}

interface CaptureRow {
  id: number;
  instrument_id: string;
  protocol: Protocol;
  received_at: number;
  raw_sha256: string;
  status: 'accepted' | 'rejected';
  reasons: string | null;
  counted_keys: string | null;
}

/** Capture journal statements on the store's connection. */
export class CaptureJournal {
  private readonly insertCapture: Database.Statement;
  private readonly settleCapture: Database.Statement;
  private readonly findCapture: Database.Statement;
  private readonly listRejected: Database.Statement;
  private readonly rawOf: Database.Statement;

  constructor(db: Database.Database) {
    this.insertCapture = db.prepare(`INSERT INTO captures (instrument_id, protocol, received_at, raw, raw_sha256, status,
      reasons, result_count, processed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.settleCapture = db.prepare('UPDATE captures SET status = ?, reasons = ?, result_count = ?, counted_keys = ?, processed_at = ? WHERE id = ?');
    this.findCapture = db.prepare(`SELECT id, instrument_id, protocol, received_at, raw_sha256, status, reasons, counted_keys
      FROM captures WHERE id = ?`);
    // The reasons' first few picked in SQLite: a list of a hundred thousand never becomes JavaScript objects.
    this.listRejected = db.prepare(`SELECT id, instrument_id, protocol, received_at, json_array_length(reasons) AS reason_count,
      (SELECT json_group_array(CASE WHEN type IN ('object', 'array') THEN json(value) ELSE value END)
        FROM (SELECT value, type FROM json_each(captures.reasons) LIMIT ${REASONS_LISTED})) AS reasons
      FROM captures WHERE status = 'rejected' ORDER BY id LIMIT ?`);
    this.rawOf = db.prepare('SELECT raw FROM captures WHERE id = ?').pluck();
  }

  /** Journals a capture; `resultCount` is how many valid results it carries. Returns its id. */
  insert(capture: Capture, rawSha256: string, rejections: readonly Rejection[], resultCount: number, now: number): number {
    const status = rejections.length > 0 ? 'rejected' : 'accepted';
    const reasons = rejections.length > 0 ? JSON.stringify(rejections) : null;
    const args = [capture.instrumentId, capture.protocol, capture.receivedAt, capture.raw, rawSha256, status, reasons];
    return Number(this.insertCapture.run(...args, resultCount, now).lastInsertRowid);
  }

  /** Records a capture's outcome; counted keys are kept only while it stays rejected (for the next reprocess). */
  settle(id: number, rejections: readonly Rejection[], resultCount: number, countedKeys: readonly string[], now: number): void {
    const rejected = rejections.length > 0;
    this.settleCapture.run(
      rejected ? 'rejected' : 'accepted',
      rejected ? JSON.stringify(rejections) : null,
      resultCount,
      rejected ? JSON.stringify([...new Set(countedKeys)]) : null,
      now,
      id,
    );
  }

  /** The capture with this id, or undefined. */
  find(id: number): JournaledCapture | undefined {
    const row = this.findCapture.get(id) as CaptureRow | undefined;
    return (
      row && {
        id: row.id,
        instrumentId: row.instrument_id,
        protocol: row.protocol,
        receivedAt: row.received_at,
        rawSha256: row.raw_sha256,
        status: row.status,
        countedKeys: row.counted_keys ? (JSON.parse(row.counted_keys) as string[]) : [],
      }
    );
  }

  /** Oldest rejected captures first, up to `limit`, each with its first REASONS_LISTED reasons. */
  rejected(limit: number): RejectedCapture[] {
    return (this.listRejected.all(limit) as (CaptureRow & { reason_count: number | null })[]).map((row) => ({
      id: row.id,
      instrumentId: row.instrument_id,
      protocol: row.protocol,
      receivedAt: row.received_at,
      reasons: row.reasons ? (JSON.parse(row.reasons) as Rejection[]) : [],
      reasonCount: row.reason_count ?? 0,
    }));
  }

  /** The raw bytes of a capture exactly as received, or undefined. */
  raw(id: number): Buffer | undefined {
    return this.rawOf.get(id) as Buffer | undefined;
  }
}
