// The contract every driver's thin runner fulfils, so the runtime treats ASTM, HL7 and line alike.
import type { InstrumentProfile } from './config/mapping.js';
import type { IngestSummary } from './store/store.js';
import type { DecodedMessage, InboundMessage, Protocol } from './message.js';
import type { JunkSampler } from './junk-sampler.js';
import type { Transport } from './transport/transport.js';

/** Injected time: the runner arms timers through this, never through globals. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock, for the composition root. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Outcome of committing one message; `unavailable` means the analyzer must keep it (NAK / AR). */
export type IngestOutcome =
  | { kind: 'committed'; summary: IngestSummary; rejections: DecodedMessage['rejections'] }
  | { kind: 'unavailable'; reason: string };

/** Commits one message durably; the runtime wraps store.ingest (which may fail on a full disk). */
export type IngestPort = (message: InboundMessage) => IngestOutcome;

/** Counters and state changes a runner reports (for /metrics, the status page, logs). Never patient data. */
export type DriverEvent =
  | { kind: 'bytes'; count: number }
  | { kind: 'message'; summary: IngestSummary }
  | { kind: 'nak'; reason: string }
  | { kind: 'checksum-error' }
  | { kind: 'discarded'; reason: string }
  | { kind: 'commit-failed'; reason: string };

/** Minimal logger shape (pino's child loggers satisfy it). */
export interface DriverLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

/** Everything a runner needs, injected by the runtime. */
export interface DriverContext {
  profile: InstrumentProfile;
  transport: Transport;
  ingest: IngestPort;
  /** False while the store cannot accept (disk guard, shutdown): ENQ gets NAK, HL7 gets AR. */
  accepting: () => boolean;
  clock: Clock;
  log: DriverLog;
  onEvent: (event: DriverEvent) => void;
  /** The instrument's sampler for input that is not a message at all (kept across sessions). */
  junk?: JunkSampler;
}

/** A running driver bound to one transport. */
export interface DriverRunner {
  readonly protocol: Protocol;
  start(): void;
  /** Stops reading; an in-flight commit finishes first. */
  stop(): Promise<void>;
}
