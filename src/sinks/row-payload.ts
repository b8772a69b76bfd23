// What every sink checks before it sends a row: the payload is the one the store wrote (its SHA-256 matches the
// digest kept beside it) and it is a result payload for the row's own key. A row that fails is a dead letter with
// the reason, never sent: a destination must never receive a record the store did not write.
import { sha256Hex, type ResultPayload } from '../payload.js';
import type { OutboxRow, Outcome } from '../delivery/contract.js';

type Dead = Extract<Outcome, { kind: 'dead' }>;

/** The row's payload, or the dead letter it is. */
export type RowPayload = { ok: true; payload: ResultPayload } | { ok: false; outcome: Dead };

const NOT_A_RESULT: Dead = { kind: 'dead', reason: 'payload is not a result payload' };

/**
 * The cheap check, without parsing (the PostgreSQL sink's hot path: its server parses the payload): the digest, and
 * the start every payload the store writes has (JSON.stringify of buildPayload: the row's key, then the record id).
 */
export function checkRowPayload(row: OutboxRow): Dead | null {
  if (sha256Hex(row.payload) !== row.payloadSha256) return { kind: 'dead', reason: 'payload corrupted at rest' };
  return row.payload.startsWith(`{"dedupKey":${JSON.stringify(row.dedupKey)},"recordId":"`) ? null : NOT_A_RESULT;
}

/** Checks and parses a row's payload. */
export function readRowPayload(row: OutboxRow): RowPayload {
  const dead = checkRowPayload(row);
  if (dead) return { ok: false, outcome: dead };
  let p: Partial<ResultPayload> | null;
  try {
    p = JSON.parse(row.payload) as Partial<ResultPayload> | null;
  } catch {
    p = null;
  }
  const r = p?.result as Partial<ResultPayload['result']> | undefined;
  const shaped =
    typeof p?.recordId === 'string' &&
    typeof p.capture === 'object' &&
    p.capture !== null &&
    typeof r === 'object' &&
    r !== null &&
    typeof r.accession === 'string' &&
    typeof r.analyteLoinc === 'string' &&
    typeof r.resultedAt === 'string';
  return shaped ? { ok: true, payload: p as ResultPayload } : { ok: false, outcome: NOT_A_RESULT };
}
