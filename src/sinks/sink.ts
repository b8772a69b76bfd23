// The sink interface: given a batch of outbox rows, one typed outcome per row. Sinks never touch SQLite;
// the delivery engine records every outcome in one transaction per batch.

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

/** What happened to one row. `scope: 'sink'` on a retry means the sink as a whole is down (circuit breaker). */
export type Outcome =
  | { kind: 'delivered'; etag?: string; detail?: string }
  | { kind: 'retry'; reason: string; notBefore?: number; scope?: 'record' | 'sink' }
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
