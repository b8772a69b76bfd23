// What the outbox carries to every sink: the keyed result, its identity, and where it came from.
import { createHash } from 'node:crypto';
import type { KeyedResult } from './result.js';
import { dedupKey, recordId } from './result.js';

/** The stored, forwarded form of one result. Serialized once at ingest; its SHA-256 is kept beside it. */
export interface ResultPayload {
  dedupKey: string;
  recordId: string;
  result: KeyedResult;
  capture: {
    /** ISO-8601 UTC time the message carrying this result was received. */
    receivedAt: string;
    /** SHA-256 hex of the raw captured bytes. */
    rawSha256: string;
  };
}

/** Builds the payload for a result received in a capture. */
export function buildPayload(result: KeyedResult, capture: { receivedAt: number; rawSha256: string }): ResultPayload {
  const key = dedupKey(result);
  return {
    dedupKey: key,
    recordId: recordId(key),
    result,
    capture: { receivedAt: new Date(capture.receivedAt).toISOString(), rawSha256: capture.rawSha256 },
  };
}

/** SHA-256 hex of a string or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
