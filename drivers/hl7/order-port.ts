// The analyzer's order port: some HL7 analyzers send results and queries on one connection and expect the host to
// connect back to a port of theirs for everything it sends them (the query's answer, work orders) and read their
// acknowledgments there. This keeps one MLLP connection to the configured host and port (opened by the injected
// `dial`, only to that address), opens it again with bounded backoff, hands each block it reads to `onMessage`, and
// says when the link went down so what was on its way is counted as not delivered. Logs hold no message text.
import type { Clock } from '../../src/clock.js';
import type { Log } from '../../src/log.js';
import type { Transport } from '../../src/transport/transport.js';
import { initialMllpState, mllpStep, type MllpState } from './mllp.js';

/** Delay before reconnect attempt `attempt` (0-based): 1 s doubling to 30 s, ±20% so analyzers' hosts spread out. */
export function orderPortDelay(attempt: number, random: () => number): number {
  return Math.round(Math.min(30_000, 1_000 * 2 ** Math.min(attempt, 5)) * (0.8 + 0.4 * random()));
}

export interface OrderPortDeps {
  host: string;
  port: number;
  dial(address: { host: string; port: number }): Promise<Transport>;
  clock: Clock;
  log: Log;
  /** Largest block read from the analyzer (its acknowledgments are a few short segments). */
  maxMessageBytes: number;
  /** A whole MLLP block from the analyzer. */
  onMessage(raw: Buffer): void;
  /** The link is down (closed, reset): whatever was written and not yet accepted will not be. */
  onDown(reason: string): void;
  random?: () => number;
}

/** One MLLP client connection to the analyzer's order port. */
export class OrderPort {
  private link: Transport | null = null;
  private attempt = 0;
  private retry: unknown = null;
  private stopped = true;

  constructor(private readonly deps: OrderPortDeps) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.retry !== null) this.deps.clock.clearTimeout(this.retry);
    this.retry = null;
    const link = this.link;
    this.link = null;
    void link?.close().catch(() => undefined);
  }

  /** Null when frames can be written now, else why not (the answer is then failed, never recorded as sent). */
  unavailable(): string | null {
    return this.link !== null ? null : `the analyzer's order port ${this.deps.host}:${this.deps.port} is not connected`;
  }

  /** Writes one frame; rejects when the link is down. */
  write(frame: Buffer): Promise<void> {
    return this.link ? this.link.write(frame) : Promise.reject(new Error(this.unavailable() ?? 'not connected'));
  }

  private connect(): void {
    if (this.stopped) return;
    const { host, port } = this.deps;
    // Only the configured address: nothing the analyzer sends can point this connection elsewhere.
    this.deps.dial({ host, port }).then(
      (link) => this.opened(link),
      (err: unknown) => {
        this.deps.log.warn({ host, port, code: (err as NodeJS.ErrnoException).code ?? String(err) }, 'hl7 order port connection failed');
        this.again();
      },
    );
  }

  private opened(link: Transport): void {
    if (this.stopped) return void link.close().catch(() => undefined);
    this.link = link;
    this.attempt = 0;
    this.deps.log.info({ host: this.deps.host, port: this.deps.port }, 'hl7 order port connected');
    let mllp: MllpState = initialMllpState;
    link.onData((data) => {
      const step = mllpStep(mllp, data, this.deps.maxMessageBytes);
      mllp = step.state;
      for (const e of step.effects) if (e.kind === 'message') this.deps.onMessage(e.raw);
    });
    link.onClose((info) => {
      if (this.link !== link) return;
      this.link = null;
      this.deps.log.warn({ host: this.deps.host, port: this.deps.port, reason: info.reason }, 'hl7 order port closed');
      this.deps.onDown(`the analyzer's order port ${this.deps.host}:${this.deps.port} closed`);
      this.again();
    });
  }

  private again(): void {
    if (this.stopped) return;
    const delay = orderPortDelay(this.attempt++, this.deps.random ?? Math.random);
    this.retry = this.deps.clock.setTimeout(() => ((this.retry = null), this.connect()), delay);
  }
}
