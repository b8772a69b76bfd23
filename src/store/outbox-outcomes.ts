// How the outcomes of delivered batches are written: the statements, one batch's marks, the day's counters.
// Every mark applies only to the payload that was claimed (layout.ts, claimedPayloadIs): a correction queued while the
// old version was in flight keeps the correction pending. A delivery the store knows no replacement has passed since
// its claim (outbox.ts, payloadsReplaced) is marked by id alone: reading its result again would cost the drain a
// lookup of a page-sized row per result, about a third of the marks' time.
import type Database from 'better-sqlite3';
import type { OutboxRow, Outcome } from '../delivery/contract.js';
import { AuditLog, claimedPayloadIs } from './layout.js';

/** One batch's outcomes: one per row, `retryAt[i]` (steady time) null keeping the row's due time. */
export interface OutcomeBatch {
  sink: string;
  rows: readonly OutboxRow[];
  outcomes: readonly Outcome[];
  retryAt: readonly (number | null)[];
}

// Marks one batch inside the caller's transaction; returns how many rows it marked sent. `unchanged` says whether a
// row's payload cannot have been replaced since its claim. `stayed` hears of each row left pending: due at its retry
// time, or null where it was (a sink-wide pause, or a mark that did not apply).
export function recordBatch(
  stmts: OutcomeStatements,
  batch: OutcomeBatch,
  at: number,
  unchanged: (id: number) => boolean,
  stayed: (id: number, dueAt: number | null) => void,
): number {
  const { sink, rows, outcomes, retryAt } = batch;
  const sentIds: number[] = [];
  const sent: [number, string][] = [];
  let marked = 0;
  rows.forEach((row, i) => {
    const outcome = outcomes[i]!;
    if (outcome.kind === 'delivered' && outcome.etag === undefined) {
      if (unchanged(row.id)) sentIds.push(row.id);
      else sent.push([row.id, row.payloadSha256]);
      return;
    }
    const changed = applyOutcome(stmts, sink, row, outcome, retryAt[i] ?? null, at);
    if (outcome.kind === 'delivered') marked += changed;
    if (outcome.kind === 'retry' && changed > 0) stayed(row.id, retryAt[i] ?? null);
    else if (changed === 0) stayed(row.id, null);
  });
  // One statement for the common case: a whole batch delivered.
  if (sentIds.length > 0) {
    const changed = stmts.sentIds.run(at, at, JSON.stringify(sentIds)).changes;
    if (changed < sentIds.length) stayed(sentIds[0]!, null);
    marked += changed;
  }
  if (sent.length > 0) {
    const changed = stmts.sentMany.run(at, at, JSON.stringify(sent)).changes;
    if (changed < sent.length) stayed(sent[0]![0], null);
    marked += changed;
  }
  if (marked > 0) {
    const minute = Math.floor(at / 60_000);
    // The sink's counter row exists before any minute can fold into it or a trigger take from it; once it does, this
    // writes nothing, and the batch's count goes to its minute alone (migration 11): one page, not two.
    stmts.countSent.run(sink);
    stmts.countMinute.run(sink, minute, marked);
    // A day and an hour: the page's last-hour rate, and whole hours for its 24-hour chart.
    stmts.forgetMinutes.run(sink, minute - 25 * 60);
  }
  return marked;
}

export interface OutcomeStatements {
  sent: Database.Statement;
  sentMany: Database.Statement;
  sentIds: Database.Statement;
  retry: Database.Statement;
  dead: Database.Statement;
  conflict: Database.Statement;
  conflictRow: Database.Statement;
  audit: AuditLog;
  countSent: Database.Statement;
  countMinute: Database.Statement;
  forgetMinutes: Database.Statement;
}

export function prepareOutcomes(db: Database.Database): OutcomeStatements {
  return {
    sent: db.prepare(`UPDATE outbox SET state = 'sent', etag = coalesce(?, etag), sent_at = ?, updated_at = ?, last_error = NULL
      WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    // The batch as [[id, payload_sha256], ...]; each row is found by its id.
    sentMany: db.prepare(`UPDATE outbox SET state = 'sent', sent_at = ?, updated_at = ?, last_error = NULL
      FROM (SELECT value ->> 0 AS id, value ->> 1 AS sha FROM json_each(?)) AS b
      WHERE outbox.id = b.id AND outbox.state = 'pending' AND ${claimedPayloadIs('b.sha')}`),
    // The same for rows whose payload is known unchanged since their claim, as a JSON array of ids.
    sentIds: db.prepare(`UPDATE outbox SET state = 'sent', sent_at = ?, updated_at = ?, last_error = NULL
      WHERE id IN (SELECT value FROM json_each(?)) AND state = 'pending'`),
    // A sink-wide failure (retryAt null) keeps the row's attempts and due time: an outage never ages a result.
    retry: db.prepare(`UPDATE outbox SET attempts = attempts + ?, next_attempt_at = coalesce(?, next_attempt_at), last_error = ?,
      updated_at = ? WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    dead: db.prepare(`UPDATE outbox SET state = 'dead', attempts = attempts + 1, last_error = ?, updated_at = ?
      WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    // The sink's current version tag, when its outcome names one, replaces ours: a correction forwarded by a person
    // (conflict-resolution.ts) then names the version it replaces (LIMS If-Match) instead of failing on a stale one.
    conflict: db.prepare(`UPDATE outbox SET state = 'conflict', etag = coalesce(?, etag), last_error = ?, updated_at = ?
      WHERE id = ? AND state = 'pending' AND ${claimedPayloadIs('?')}`),
    conflictRow: db.prepare(`INSERT INTO conflicts (dedup_key, origin, stored_payload, incoming_payload, incoming_digest, reason, detected_at)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedup_key, origin, incoming_digest) DO UPDATE SET occurrences = occurrences + 1`),
    audit: new AuditLog(db),
    // Once per batch instead of a trigger per row (migration 2); the count itself is in the minutes (migration 11).
    countSent: db.prepare(`INSERT INTO outbox_sent (sink, n) VALUES (?, 0) ON CONFLICT (sink) DO NOTHING`),
    countMinute: db.prepare(`INSERT INTO outbox_sent_minutes (sink, minute, n) VALUES (?, ?, ?)
      ON CONFLICT (sink, minute) DO UPDATE SET n = n + excluded.n`),
    forgetMinutes: db.prepare('DELETE FROM outbox_sent_minutes WHERE sink = ? AND minute < ?'),
  };
}

/** Applies one outcome; returns how many rows it changed (0: the row was not pending with the claimed payload). */
function applyOutcome(s: OutcomeStatements, sink: string, row: OutboxRow, outcome: Outcome, retryAt: number | null, at: number): number {
  switch (outcome.kind) {
    case 'delivered':
      return s.sent.run(outcome.etag ?? null, at, at, row.id, row.payloadSha256).changes;
    case 'retry':
      return s.retry.run(retryAt === null ? 0 : 1, retryAt, outcome.reason, at, row.id, row.payloadSha256).changes;
    case 'dead':
      if (s.dead.run(outcome.reason, at, row.id, row.payloadSha256).changes === 0) return 0;
      s.audit.write(at, 'gateway', 'dead-letter', row.dedupKey, JSON.stringify({ sink, reason: outcome.reason }));
      return 1;
    case 'conflict':
      if (s.conflict.run(theirEtag(outcome), outcome.reason, at, row.id, row.payloadSha256).changes === 0) return 0;
      s.conflictRow.run(row.dedupKey, sink, outcome.theirs ?? '', row.payload, row.payloadSha256, outcome.reason, at);
      s.audit.write(at, 'gateway', 'sink-conflict', row.dedupKey, JSON.stringify({ sink, reason: outcome.reason }));
      return 1;
  }
}

// The version the sink holds (a conflict's `etag`, delivery/contract.ts), kept so a person's forward sends it as If-Match.
function theirEtag(outcome: Extract<Outcome, { kind: 'conflict' }>): string | null {
  return outcome.etag ?? null;
}
