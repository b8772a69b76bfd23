// Keeps one instrument's link open for as long as the gateway runs: a port missing at start, unplugged or
// failing is reopened with bounded backoff; each fresh transport is handed to `attach` (which starts the
// driver runner on it). Every instrument has its own supervisor and nothing here is shared between them, so
// one instrument's trouble stays its own (ARCHITECTURE.md invariant 7).
import type { Finding } from '../detect/finding.js';
import { wallTimeOf, type Clock } from '../clock.js';
import type { DriverEvent } from '../runner-contract.js';
import type { Log } from '../log.js';
import type { CloseInfo, Transport } from './transport.js';

/** What the technician sees: connected, waiting for the device (missing/refused), or an error with its reason. */
export type PortState = 'connected' | 'waiting-for-device' | 'error' | 'stopped';

/** One instrument's link status, for /healthz, /metrics and the status page. */
export interface PortStatus {
  instrument: string;
  /** Where the port is (`/dev/serial/by-id/...`, `tcp://host:port`). */
  endpoint: string;
  state: PortState;
  /** Why it is not connected (or why the last session ended); absent while connected. */
  reason?: string;
  /** Epoch ms of the last byte received, if any since start. */
  lastByteAt?: number;
  /** Epoch ms the current state began. */
  since: number;
  /** Times the link came back after having been connected before (unplug and replug, peer reconnect). */
  reconnects: number;
  /** Open attempts that failed (device missing, refused, error). */
  failedOpens: number;
  /** Connections a listening port refused since start (allow-list, a session already talking). */
  refusedConnections?: number;
  /** Messages lost since start: ones the analyzer will not resend that could not be kept (see the line driver). */
  lostMessages?: number;
  /** Rejected messages refused since start: the instrument sent only rejected ones, over its limit a minute. */
  refusedOverLimit?: number;
  /** Epoch ms of the next open attempt while not connected. */
  nextAttemptAt?: number;
  /** Epoch ms of the last message committed, if any since start. */
  lastMessageAt?: number;
  /** Since start, from the driver's events (see recordEvent). */
  counters: { messages: number; inserted: number; rejected: number; naks: number; checksumErrors: number; discarded: number };
  /** Present while the instrument's serial settings are being detected (`baudRate: auto`). */
  detection?: Finding;
}

/** Bounded exponential backoff for reopening a port. */
export interface ReopenPolicy {
  baseMs: number;
  capMs: number;
  /** A session that lasted at least this long resets the backoff to baseMs. */
  stableMs: number;
}

export const defaultReopenPolicy: ReopenPolicy = { baseMs: 1_000, capMs: 30_000, stableMs: 10_000 };

/** Delay before reopen attempt number `attempt` (0-based): min(cap, base·2^attempt), with ±20% jitter. */
export function reopenDelay(attempt: number, policy: ReopenPolicy, random: () => number): number {
  const raw = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(Math.min(policy.capMs, raw * (0.8 + 0.4 * random())));
}

/** Errors that mean "the device is not there (yet)" rather than "something is wrong". */
export function isMissingDevice(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code && ['ENOENT', 'ENODEV', 'ENXIO', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET'].includes(code)) return true;
  // serialport's native binding reports errno as text only: "Error: No such file or directory, cannot open /dev/...".
  return /no such file or directory|no such device/i.test(String((err as Error | undefined)?.message ?? err));
}

/** What `attach` returns: the session to stop when the transport closes or the supervisor stops. */
export interface Attachment {
  stop(): Promise<void>;
}

export interface SupervisorOptions {
  instrument: string;
  endpoint: string;
  /** Opens the transport once; rejects when the device is missing or fails. */
  open: (signal: AbortSignal) => Promise<Transport>;
  /** Starts a driver runner on a fresh transport. */
  attach: (transport: Transport) => Attachment;
  clock: Clock;
  log: Log;
  random?: () => number;
  policy?: ReopenPolicy;
  /** Reason shown while an open is pending (a tcp-server endpoint waits for the analyzer to connect). */
  waitingReason?: string;
  /**
   * The endpoint listens (tcp-server): a session's end is the peer's business (many analyzers connect once per
   * message), so the next open follows at once; backoff is only for opens that fail (the port is taken).
   */
  listening?: boolean;
  /** Called after every state change and every reconnect (wire to metrics and the status page). */
  onStatus?: (status: PortStatus) => void;
}

/** Supervises one instrument's port. `start()` returns at once; `stop()` closes the session and stops retrying. */
export class PortSupervisor {
  private status: PortStatus;
  private attempt = 0;
  private everConnected = false;
  private running = false;
  private timer: unknown;
  private abort: AbortController | undefined;
  private session: { transport: Transport; attachment: Attachment | undefined; openedAt: number } | undefined;
  private readonly policy: ReopenPolicy;
  private readonly random: () => number;

  constructor(private readonly options: SupervisorOptions) {
    this.policy = options.policy ?? defaultReopenPolicy;
    this.random = options.random ?? (() => 0.5);
    this.status = {
      instrument: options.instrument,
      endpoint: options.endpoint,
      state: 'stopped',
      since: options.clock.monotonic(),
      reconnects: 0,
      failedOpens: 0,
      counters: { messages: 0, inserted: 0, rejected: 0, naks: 0, checksumErrors: 0, discarded: 0 },
    };
  }

  /** A copy of the current status, its times on the wall clock. */
  snapshot(): PortStatus {
    // Kept on the monotonic clock, so that "last message 5 min ago" survives a step of the wall clock.
    const { clock } = this.options;
    const copy: PortStatus = { ...this.status, since: wallTimeOf(clock, this.status.since), counters: { ...this.status.counters } };
    for (const key of ['lastByteAt', 'lastMessageAt', 'nextAttemptAt'] as const) {
      const at = this.status[key];
      if (at !== undefined) copy[key] = wallTimeOf(clock, at);
    }
    return copy;
  }

  /** Counts and logs a connection the listening endpoint refused (the log is summarized under a flood). */
  recordRefused(refusal: { peer: string; reason: string }): void {
    this.status.refusedConnections = (this.status.refusedConnections ?? 0) + 1;
    this.options.log.warn({ endpoint: this.options.endpoint, peer: refusal.peer, reason: refusal.reason }, 'connection refused');
  }

  /** Counts a driver event (wire DriverContext.onEvent here too) so the status page sees activity per instrument. */
  recordEvent(event: DriverEvent): void {
    const c = this.status.counters;
    if (event.kind === 'message') {
      c.messages += 1;
      c.inserted += event.summary.inserted;
      c.rejected += event.summary.rejected;
      this.status.lastMessageAt = event.receivedAt;
    } else if (event.kind === 'nak') c.naks += 1;
    else if (event.kind === 'checksum-error') c.checksumErrors += 1;
    else if (event.kind === 'discarded') c.discarded += 1;
    else if (event.kind === 'lost') this.status.lostMessages = (this.status.lostMessages ?? 0) + 1;
    else if (event.kind === 'over-limit') this.status.refusedOverLimit = (this.status.refusedOverLimit ?? 0) + 1;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.set({ state: 'waiting-for-device', reason: this.options.waitingReason ?? 'opening' });
    void this.tryOpen();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort?.abort();
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const session = this.session;
    this.session = undefined;
    if (session) {
      await session.attachment?.stop().catch((err: unknown) => this.options.log.error({ err }, 'driver stop failed'));
      await session.transport.close().catch(() => undefined);
    }
    this.set({ state: 'stopped', reason: 'gateway stopping', nextAttemptAt: undefined });
  }

  private async tryOpen(): Promise<void> {
    this.timer = undefined;
    const abort = new AbortController();
    this.abort = abort;
    let transport: Transport;
    try {
      transport = await this.options.open(abort.signal);
    } catch (err) {
      if (!this.running || abort.signal.aborted) return;
      const missing = isMissingDevice(err);
      const reason = missing ? `device not available: ${describe(err)}` : describe(err);
      if (this.status.reason !== reason) this.options.log.warn({ endpoint: this.options.endpoint, reason }, missing ? 'waiting for device' : 'port error');
      this.status.failedOpens += 1;
      this.set({ state: missing ? 'waiting-for-device' : 'error', reason });
      this.schedule();
      return;
    }
    if (!this.running) {
      await transport.close().catch(() => undefined);
      return;
    }
    this.connected(transport);
  }

  private connected(inner: Transport): void {
    const transport = tap(inner, () => (this.status.lastByteAt = this.options.clock.monotonic()));
    const session = { transport, attachment: undefined as Attachment | undefined, openedAt: this.options.clock.monotonic() };
    this.session = session;
    if (this.everConnected) this.status.reconnects += 1;
    this.everConnected = true;
    transport.onClose((info) => void this.closed(session, info));
    this.set({ state: 'connected', reason: undefined, nextAttemptAt: undefined });
    this.options.log.info({ endpoint: this.options.endpoint }, 'port connected');
    try {
      session.attachment = this.options.attach(transport);
    } catch (err) {
      this.options.log.error({ err }, 'driver failed to start');
      void transport.close();
    }
  }

  private async closed(session: NonNullable<PortSupervisor['session']>, info: CloseInfo): Promise<void> {
    if (this.session !== session) return;
    this.session = undefined;
    if (this.options.clock.monotonic() - session.openedAt >= this.policy.stableMs) this.attempt = 0;
    this.options.log.warn({ endpoint: this.options.endpoint, reason: info.reason }, 'port closed');
    await session.attachment?.stop().catch((err: unknown) => this.options.log.error({ err }, 'driver stop failed'));
    if (!this.running) return;
    this.set({ state: 'waiting-for-device', reason: info.reason });
    if (!this.options.listening) return this.schedule();
    this.attempt = 0;
    void this.tryOpen();
  }

  private schedule(): void {
    const delay = reopenDelay(this.attempt, this.policy, this.random);
    this.attempt += 1;
    this.set({ nextAttemptAt: this.options.clock.monotonic() + delay });
    this.timer = this.options.clock.setTimeout(() => void this.tryOpen(), delay);
  }

  private set(change: Partial<PortStatus>): void {
    const now = this.options.clock.monotonic();
    if (change.state !== undefined && change.state !== this.status.state) this.status.since = now;
    this.status = { ...this.status, ...change };
    if (this.status.reason === undefined) delete this.status.reason;
    if (this.status.nextAttemptAt === undefined) delete this.status.nextAttemptAt;
    this.options.onStatus?.(this.snapshot());
  }
}

/** Wraps a transport so the supervisor sees bytes and close without taking the runner's listener slots. */
function tap(inner: Transport, onBytes: () => void): Transport {
  const dataListeners: ((data: Buffer) => void)[] = [];
  const closeListeners: ((info: CloseInfo) => void)[] = [];
  let closed: CloseInfo | undefined;
  inner.onData((data) => {
    onBytes();
    for (const l of dataListeners) l(data);
  });
  inner.onClose((info) => {
    if (closed) return;
    closed = info;
    for (const l of closeListeners) l(info);
  });
  return {
    write: (data) => inner.write(data),
    close: () => inner.close(),
    talking: () => inner.talking?.(),
    ...(inner.pause && inner.resume ? { pause: () => inner.pause?.(), resume: () => inner.resume?.() } : {}),
    onData: (l) => void dataListeners.push(l),
    onClose: (l) => (closed ? queueMicrotask(() => l(closed as CloseInfo)) : void closeListeners.push(l)),
  };
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  const message = e?.message ?? String(err);
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
