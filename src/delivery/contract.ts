// The delivery contract between the outbox and the sinks: a batch of outbox rows goes to a sink, one typed outcome
// per row comes back. Sinks never touch SQLite; the delivery engine records every outcome in one transaction per
// batch. Neutral ground: the store, delivery and every sink import this file, and none of them imports another.

/** One row of the outbox as a sink sees it. `payload` is the JSON of a ResultPayload. */
export interface OutboxRow {
  id: number;
  sink: string;
  dedupKey: string;
  recordId: string;
  attempts: number;
  /** Last ETag the sink returned for this record, if any (LIMS conditional writes). */
  etag: string | null;
  payload: string;
  payloadSha256: string;
}

/**
 * What a retry says about the sink as a whole, for the delivery engine's circuit breaker:
 * - `record` (the default): nothing; this record alone must wait (an idempotency key in processing, 429, not tried).
 * - `sink`: one failed exchange of the kind a sink that is down gives too (5xx, lost answer, timeout, reset). An
 *   isolated one costs its record a retry; `failureThreshold` of them in a row with no answer between pause the sink.
 *   It is counted once per exchange: when several rows rode on one failed exchange (PostgreSQL's batch statement),
 *   one of them carries `sink` and the others `record`.
 * - `unreachable`: the sink could not be reached at all (no connection could be made): pause it at once.
 */
export type RetryScope = 'record' | 'sink' | 'unreachable';

/** What happened to one row. */
export type Outcome =
  | { kind: 'delivered'; etag?: string; detail?: string }
  | { kind: 'retry'; reason: string; notBefore?: number; scope?: RetryScope }
  // `etag`: the sink's current version tag of the record (LIMS); a person's forward sends it as If-Match.
  | { kind: 'conflict'; reason: string; theirs?: string; etag?: string }
  | { kind: 'dead'; reason: string };

/** A destination for results (central PostgreSQL, the LIMS). */
export interface Sink {
  readonly name: string;
  /** One outcome per row, same order. Never throws for I/O: a failure is an outcome. */
  deliver(batch: readonly OutboxRow[], signal: AbortSignal): Promise<Outcome[]>;
  /** Releases pools and sockets. */
  close(): Promise<void>;
}
