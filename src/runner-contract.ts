// The contract between the gateway and a protocol driver's thin runner (drivers/<protocol>/runner.ts): what the
// runner is given (transport, commit port, clock, log) and what it reports, so the gateway treats ASTM, HL7 and line
// alike. The protocol drivers themselves live in drivers/; driver-registry.ts binds them to their options.
import type { InstrumentProfile } from './config/mapping.js';
import type { Clock } from './clock.js';
import type { Log } from './log.js';
import type { DecodedMessage, InboundMessage, IngestSummary, Protocol } from './message.js';
import type { JunkSampler } from './junk-sampler.js';
import type { RejectedLimit } from './rejected-limit.js';
import type { OrdersPort } from './orders/desk.js';
import type { Transport } from './transport/transport.js';

/** Outcome of committing one message; `unavailable` means the analyzer must keep it (NAK / AR). */
export type IngestOutcome = { kind: 'committed'; summary: IngestSummary; rejections: DecodedMessage['rejections'] } | { kind: 'unavailable'; reason: string };

/**
 * Commits one message durably; the runtime wraps store.ingest (which may fail on a full disk). Its outcome may come
 * later than the call (a commit shared with other messages): runners reach it only through commit-path.ts, which
 * awaits it.
 */
export type IngestPort = (message: InboundMessage) => IngestOutcome | Promise<IngestOutcome>;

/** Counters and state changes a runner reports (for /metrics, the status page, logs). Never patient data. */
export type DriverEvent =
  | { kind: 'bytes'; count: number }
  /** A message committed; `receivedAt` is when its bytes were complete, on the monotonic clock (the capture's time). */
  | { kind: 'message'; summary: IngestSummary; receivedAt: number }
  | { kind: 'nak'; reason: string }
  | { kind: 'checksum-error' }
  | { kind: 'discarded'; reason: string }
  | { kind: 'commit-failed'; reason: string }
  /** A rejected message refused: the instrument sent only rejected ones, more than its limit a minute. */
  | { kind: 'over-limit' }
  /**
   * A two-way figure: a query, its answer (`answered-orders`, `no-information:<reason>`, `answers-failed`), a download;
   * an answer the analyzer accepted carries the time from the query's arrival.
   */
  | { kind: 'orders'; figure: string; answeredInMs?: number }
  /** Characters written to the analyzer were replaced: its charset cannot carry them (src/charset.ts). */
  | { kind: 'substituted'; characters: number }
  /** A message to the analyzer was not written: its bytes would not have said what was meant (the reason, no text). */
  | { kind: 'unwritten'; reason: string }
  /** A message the analyzer will not send again could not be kept (a printer's report the store could not take). */
  | { kind: 'lost'; reason: string };

/** Everything a runner needs, injected by the runtime. */
export interface DriverContext {
  /** Read at each message, never kept: a configuration reload may give the next message a new mapping or clock zone. */
  readonly profile: InstrumentProfile;
  transport: Transport;
  ingest: IngestPort;
  /** False while the store cannot accept (disk guard, shutdown): ENQ gets NAK, HL7 gets AR. */
  accepting: () => boolean;
  clock: Clock;
  log: Log;
  onEvent: (event: DriverEvent) => void;
  /** The instrument's sampler for input that is not a message at all (kept across sessions). */
  junk?: JunkSampler;
  /** The instrument's limit on rejected messages (kept across sessions) and the configured figures, for its log lines. */
  rejectedLimit?: { limit: RejectedLimit; messagesPerMinute: number; mbPerMinute: number };
  /** Where a two-way instrument's orders come from and what it was sent is kept; absent when no LIMS is configured. */
  orders?: OrdersPort;
  /**
   * Opens a TCP connection to exactly this address (an HL7 analyzer's order port, `orders.orderPort`); rejects with the
   * socket's error. The composition root gives it; absent, a driver has no connection of its own to open.
   */
  dial?: (address: { host: string; port: number }) => Promise<Transport>;
}

/** A running driver bound to one transport. */
export interface DriverRunner {
  readonly protocol: Protocol;
  start(): void;
  /** Stops reading; an in-flight commit finishes first. */
  stop(): Promise<void>;
}
