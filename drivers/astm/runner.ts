// The thin runner: binds the pure link layer and decoder to a transport, a clock and the store's ingest.
// It knows no protocol rule; it performs effects and feeds outcomes back into step().
import type { DriverContext, DriverRunner } from '../../src/runner-contract.js';
import type { DecodedMessage } from '../../src/message.js';
import { decodeAstmText, linkConfigOf } from './decode.js';
import type { LinkEffect, LinkInput, LinkState } from './link.js';
import { drive, initialLinkState } from './link.js';
import type { AstmOptions } from './options.js';

/** Creates the ASTM runner for one instrument. */
export function createAstmRunner(ctx: DriverContext, options: AstmOptions): DriverRunner {
  return new AstmRunner(ctx, options);
}

class AstmRunner implements DriverRunner {
  readonly protocol = 'astm' as const;
  private state: LinkState;
  private timer: unknown = null;
  private running = false;
  /** Inputs that arrived while effects were being carried out (a transport calling back during a write). */
  private readonly inputs: LinkInput[] = [];
  private feeding = false;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: AstmOptions,
  ) {
    this.state = initialLinkState(linkConfigOf(options), ctx.accepting());
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.ctx.transport.onData((data) => this.onData(data));
    this.ctx.transport.onClose((info) => {
      this.cancelTimer();
      this.ctx.log.warn({ reason: info.reason }, 'astm transport closed');
    });
  }

  async stop(): Promise<void> {
    // Commits are synchronous, so none is in flight once this runs.
    this.running = false;
    this.cancelTimer();
  }

  private onData(data: Buffer): void {
    if (!this.running) return;
    this.ctx.onEvent({ kind: 'bytes', count: data.length });
    const accepting = this.ctx.accepting();
    if (accepting !== this.state.accepting) this.feed({ kind: 'accepting', accepting });
    this.feed({ kind: 'bytes', data });
  }

  private feed(input: LinkInput): void {
    this.inputs.push(input);
    if (this.feeding) return;
    this.feeding = true;
    try {
      for (let next = this.inputs.shift(); next; next = this.inputs.shift()) {
        this.state = drive(this.state, next, (effect) => this.perform(effect));
      }
    } finally {
      this.feeding = false;
    }
  }

  /** Carries out one effect; a commit returns its outcome as the next input. */
  private perform(effect: LinkEffect): LinkInput | void {
    switch (effect.kind) {
      case 'write':
        this.ctx.transport.write(effect.data).catch((err: Error) => this.ctx.log.warn({ err: err.message }, 'astm write failed'));
        return;
      case 'arm-timer':
        this.cancelTimer();
        this.timer = this.ctx.clock.setTimeout(() => {
          this.timer = null;
          if (this.running) this.feed({ kind: 'timeout' });
        }, effect.ms);
        return;
      case 'cancel-timer':
        this.cancelTimer();
        return;
      case 'noise':
        return;
      case 'event':
        if (effect.event.kind !== 'checksum-error') this.ctx.log.warn({ event: effect.event }, 'astm link');
        this.ctx.onEvent(effect.event);
        return;
      case 'commit':
        return { kind: 'committed', ok: this.commit(effect.raw, effect.text) };
    }
  }

  /** Durable before ACK: true only when the store committed the message (invariant 1). */
  private commit(raw: Buffer, text: Buffer): boolean {
    const capture = { instrumentId: this.ctx.profile.id, protocol: 'astm' as const, receivedAt: this.ctx.clock.now(), raw };
    let outcome;
    try {
      outcome = this.ctx.ingest({ capture, ...this.decode(text) });
    } catch (err) {
      outcome = { kind: 'unavailable' as const, reason: (err as Error).message };
    }
    if (outcome.kind === 'committed') {
      this.ctx.onEvent({ kind: 'message', summary: outcome.summary });
      return true;
    }
    this.ctx.log.error({ reason: outcome.reason }, 'astm commit failed; NAK, the analyzer keeps the message');
    this.ctx.onEvent({ kind: 'commit-failed', reason: outcome.reason });
    return false;
  }

  private decode(text: Buffer): DecodedMessage {
    try {
      return decodeAstmText(text, this.ctx.profile, this.options);
    } catch (err) {
      // A decoder bug must not lose the message: it is journaled raw and rejected (invariant 2).
      this.ctx.log.error({ err: (err as Error).message }, 'astm decoder error');
      return { results: [], rejections: [{ reason: `decoder error: ${(err as Error).message}` }] };
    }
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.ctx.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
