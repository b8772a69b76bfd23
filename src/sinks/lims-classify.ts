// How the LIMS sink reads one HTTP exchange: a table of rules, first match wins. Pure: no I/O, time passed in.
// ARCHITECTURE.md invariant 6: only record-specific permanent failures are dead; anything that says "the LIMS
// (or the way to it) is unwell" is a retry with scope 'sink' (the delivery engine retries the record, and pauses the
// drain when such failures come in a row), or 'unreachable' when no connection could be made (paused at once).
import type { RetryScope } from '../delivery/contract.js';
import type { ExchangeFailure } from './lims-http.js';

/** What came back from one request: an HTTP answer, or no answer at all. */
export type Exchange = { kind: 'answer'; status: number; problem: string | null } | { kind: 'failure'; failure: ExchangeFailure };

/** What the sink does next. */
export type Verdict =
  | { action: 'delivered' }
  | { action: 'check-record'; why: string }
  | { action: 'refresh-token' }
  | { action: 'retry'; scope: RetryScope; delay: 'retry-after' | 'processing' | 'none'; why: string }
  | { action: 'dead'; why: string };

/** Problem type a LIMS sends with 409 while the first request under the same idempotency key still runs. */
export const PROBLEM_KEY_IN_PROCESSING = 'idempotency-key-in-processing';

interface Rule {
  /** Inclusive status range, or a transport failure. */
  readonly when: { status: readonly [number, number]; problem?: string } | { failure: readonly string[] };
  readonly then: Verdict;
}

/** The classification table, first match wins; read it top to bottom as the contract. */
export const limsRules: readonly Rule[] = [
  { when: { status: [200, 299] }, then: { action: 'delivered' } },
  // draft-ietf-httpapi-idempotency-key-header: 409 while the original request under this key is in flight.
  {
    when: { status: [409, 409], problem: PROBLEM_KEY_IN_PROCESSING },
    then: { action: 'retry', scope: 'record', delay: 'processing', why: 'idempotency key still in processing' },
  },
  // RFC 9110 13.1: a failed If-Match / If-None-Match. Never resend blindly; look at what the LIMS holds.
  { when: { status: [409, 409] }, then: { action: 'check-record', why: 'conflict on a conditional write' } },
  { when: { status: [412, 412] }, then: { action: 'check-record', why: 'precondition failed' } },
  { when: { status: [401, 401] }, then: { action: 'refresh-token' } },
  // RFC 6585 4: 429 says this client sends too fast. The LIMS is up: the row waits for Retry-After, the breaker stays
  // closed, and the sink's pacing (lims-limiter.ts) keeps fewer requests in flight when 429s come often.
  { when: { status: [429, 429] }, then: { action: 'retry', scope: 'record', delay: 'retry-after', why: 'rate limited' } },
  { when: { status: [503, 503] }, then: { action: 'retry', scope: 'sink', delay: 'retry-after', why: 'LIMS unavailable' } },
  { when: { status: [500, 599] }, then: { action: 'retry', scope: 'sink', delay: 'none', why: 'LIMS server error' } },
  { when: { status: [400, 499] }, then: { action: 'dead', why: 'rejected by the LIMS' } },
  // 1xx/3xx are not part of the contract: a misconfigured URL or proxy, which concerns every record alike.
  { when: { status: [100, 399] }, then: { action: 'retry', scope: 'sink', delay: 'none', why: 'unexpected status' } },
  { when: { failure: ['aborted'] }, then: { action: 'retry', scope: 'record', delay: 'none', why: 'delivery aborted' } },
  { when: { failure: ['timeout'] }, then: { action: 'retry', scope: 'sink', delay: 'none', why: 'LIMS timed out' } },
  { when: { failure: ['connect'] }, then: { action: 'retry', scope: 'unreachable', delay: 'none', why: 'LIMS unreachable' } },
  // The request may have been applied; the idempotency key and the conditional write make the resend safe.
  { when: { failure: ['lost'] }, then: { action: 'retry', scope: 'sink', delay: 'none', why: 'response lost' } },
  // No answer of the contract is that large: a broken LIMS or proxy, which concerns every record alike.
  {
    when: { failure: ['too-large'] },
    then: { action: 'retry', scope: 'sink', delay: 'none', why: 'LIMS answer over the size cap (sinks.lims.maxAnswerBytes)' },
  },
];

/** Classifies one exchange by the first matching rule of `limsRules`. */
export function classify(exchange: Exchange): Verdict {
  for (const { when, then } of limsRules) {
    if ('failure' in when) {
      if (exchange.kind === 'failure' && when.failure.includes(exchange.failure)) return then;
      continue;
    }
    if (exchange.kind !== 'answer') continue;
    const [lo, hi] = when.status;
    if (exchange.status < lo || exchange.status > hi) continue;
    if (when.problem !== undefined && exchange.problem !== when.problem) continue;
    return then;
  }
  return { action: 'retry', scope: 'sink', delay: 'none', why: 'unclassified answer' };
}

/** RFC 9110 10.2.3 Retry-After (delay-seconds or HTTP-date) as an absolute time in ms, or undefined. */
export function retryAfterAt(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return now + Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(at, now) : undefined;
}

/** The `type` (or `code`) of an RFC 9457 problem document, reduced to its last path segment; null otherwise. */
export function problemOf(body: string): string | null {
  try {
    const doc = JSON.parse(body) as unknown;
    if (typeof doc !== 'object' || doc === null) return null;
    const t = (doc as { type?: unknown; code?: unknown }).type ?? (doc as { code?: unknown }).code;
    return typeof t === 'string' ? (t.split('/').pop() ?? null) : null;
  } catch {
    return null;
  }
}
