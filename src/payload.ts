// What the outbox carries to every sink: the keyed result, its identity, and where it came from.
import { hash } from 'node:crypto';
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
    /** Present when the gateway's clock was not synchronised then: receivedAt may be far off (never the result's time). */
    clock?: 'unsynchronised';
    /** SHA-256 hex of the raw captured bytes. */
    rawSha256: string;
  };
  /**
   * Set only on a correction a person forwarded: `clinicalContent()` (result.ts) of the version this one replaces,
   * as the destination holds it. The central loader then replaces that version and only that one (compare-and-set);
   * without it, or when the destination holds yet another version, different content stays a conflict.
   */
  supersedes?: string;
}

/** Builds the payload for a result received in a capture. */
export function buildPayload(result: KeyedResult, capture: { receivedAt: number; rawSha256: string; clock?: 'unsynchronised' }): ResultPayload {
  const key = dedupKey(result);
  const clock = capture.clock ? { clock: capture.clock } : {};
  return {
    dedupKey: key,
    recordId: recordId(key),
    result,
    capture: { receivedAt: new Date(capture.receivedAt).toISOString(), rawSha256: capture.rawSha256, ...clock },
  };
}

/** SHA-256 hex of a string or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  // One-shot: no Hash object per call (ingest hashes every capture and payload).
  return hash('sha256', data);
}
