// The thin runner: binds the pure link layer and decoder to a transport, a clock and the commit path.
// It knows no protocol rule; it performs effects and feeds outcomes back into step().
import { CommitPath } from '../../src/commit-path.js';
import type { DriverContext, DriverRunner } from '../../src/runner-contract.js';
import { decodeAstmText, linkConfigOf } from './decode.js';
import type { LinkEffect, LinkInput, LinkState } from './link.js';
import { drive, initialLinkState } from './link.js';
import type { AstmOptions } from './options.js';
import { hasHeaderRecord } from './records.js';

/** Decodes one message's reassembled text; injected so a test can hand the runner a decoder that fails. */
export type AstmMessageDecoder = typeof decodeAstmText;

/** Creates the ASTM runner for one instrument. */
export function createAstmRunner(ctx: DriverContext, options: AstmOptions, decode: AstmMessageDecoder = decodeAstmText): DriverRunner {
  return new AstmRunner(ctx, options, decode);
}

const junkLabel = { event: 'not an ASTM message', one: 'astm input', many: 'inputs' };

class AstmRunner implements DriverRunner {
  readonly protocol = 'astm' as const;
  private state: LinkState;
  private timer: unknown = null;
  private running = false;
  /** Inputs that arrived while effects were being carried out (a transport calling back during a write). */
  private readonly inputs: LinkInput[] = [];
  private feeding = false;
  private readonly path: CommitPath;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: AstmOptions,
    private readonly decode: AstmMessageDecoder,
  ) {
    this.state = initialLinkState(linkConfigOf(options), ctx.accepting());
    this.path = new CommitPath(ctx, 'astm');
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
    this.running = false;
    this.cancelTimer();
    // An outcome the port still owes arrives and its frame is answered (the link holds its committing phase till then).
    await this.path.settled();
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
        this.state = drive(this.state, next, (effect, after) => this.perform(effect, after));
      }
    } finally {
      this.feeding = false;
    }
  }

  /** Carries out one effect; a commit returns its outcome as the next input. */
  private perform(effect: LinkEffect, after: LinkState): LinkInput | void {
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
        // The outcome comes back as the next input, at once or once the port answers; meanwhile the link holds
        // what arrives (its committing phase).
        this.commit(effect.raw, effect.text, after, (ok) => this.feed({ kind: 'committed', ok }));
        return;
    }
  }

  /**
   * Durable before ACK: ok only when the store committed the message (invariant 1). Text without any H record is
   * not a message at all (noise, another protocol on the line): it is counted and sampled, and its completing frame
   * is NAKed, never ACKed. Where there is no frame to answer (bare records, a message that EOT completed) a failed
   * commit is retried, so junk is dropped there once counted.
   */
  private commit(raw: Buffer, text: Buffer, committing: LinkState, then: (ok: boolean) => void): void {
    if (hasHeaderRecord(text)) {
      this.path.commit(raw, () => this.decode(text, this.ctx.profile, this.options), (outcome) => then(outcome.kind === 'committed'));
      return;
    }
    const answerable = 'completing' in committing && committing.completing !== null;
    this.path.junk(raw, 'not an ASTM message: no H header record', junkLabel, () => then(!answerable));
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.ctx.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
