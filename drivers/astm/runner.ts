// The thin runner: binds the pure line (receiver and sender, line.ts) and decoder to a transport, a clock, the commit
// path and, for a two-way instrument, the order desk (two-way.ts). It knows no protocol rule; it performs effects and
// feeds outcomes back into the line.
import { CommitPath } from '../../src/commit-path.js';
import { orderDeskOf } from '../../src/orders/desk-of.js';
import type { DriverContext, DriverRunner } from '../../src/runner-contract.js';
import { decodeAstmText, linkConfigOf } from './decode.js';
import type { LineEffect, LineInput, LineState, LineTimer } from './line.js';
import { driveLine } from './line.js';
import { initialLinkState } from './link.js';
import type { AstmOptions } from './options.js';
import { hasHeaderRecord } from './records.js';
import { initialSenderState } from './sender.js';
import { AstmTwoWay } from './two-way.js';

/** Decodes one message's reassembled text; injected so a test can hand the runner a decoder that fails. */
export type AstmMessageDecoder = typeof decodeAstmText;

/** Creates the ASTM runner for one instrument. */
export function createAstmRunner(ctx: DriverContext, options: AstmOptions, decode: AstmMessageDecoder = decodeAstmText): DriverRunner {
  return new AstmRunner(ctx, options, decode);
}

const junkLabel = { event: 'not an ASTM message', one: 'astm input', many: 'inputs' };

class AstmRunner implements DriverRunner {
  readonly protocol = 'astm' as const;
  private state: LineState;
  private readonly timers = new Map<LineTimer, unknown>();
  private running = false;
  /** Inputs that arrived while effects were being carried out (a transport calling back during a write). */
  private readonly inputs: LineInput[] = [];
  private feeding = false;
  /** Effects of protocol traffic performed so far (Transport.talking). */
  private traffic = 0;
  private readonly path: CommitPath;
  private readonly twoWay: AstmTwoWay | null;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: AstmOptions,
    private readonly decode: AstmMessageDecoder,
  ) {
    this.state = { receiver: initialLinkState(linkConfigOf(options), ctx.accepting()), sender: initialSenderState({ maxFrameBytes: options.maxFrameBytes }) };
    this.path = new CommitPath(ctx, 'astm');
    this.twoWay = twoWayOf(ctx, options, (input) => this.feed(input));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.ctx.transport.onData((data) => this.onData(data));
    this.ctx.transport.onClose((info) => {
      this.cancelTimers();
      this.twoWay?.stop();
      this.ctx.log.warn({ reason: info.reason }, 'astm transport closed');
    });
    this.twoWay?.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.twoWay?.stop();
    this.cancelTimers();
    // An outcome the port still owes arrives and its frame is answered (the link holds its committing phase till then).
    await this.path.settled();
    this.cancelTimers();
  }

  private onData(data: Buffer): void {
    if (!this.running) return;
    this.ctx.onEvent({ kind: 'bytes', count: data.length });
    const accepting = this.ctx.accepting();
    if (accepting !== this.state.receiver.accepting) this.feed({ kind: 'accepting', accepting });
    const before = this.traffic;
    this.feed({ kind: 'bytes', data });
    if (this.traffic !== before) this.ctx.transport.talking?.();
  }

  private feed(input: LineInput): void {
    this.inputs.push(input);
    if (this.feeding) return;
    this.feeding = true;
    try {
      for (let next = this.inputs.shift(); next; next = this.inputs.shift()) {
        this.state = driveLine(this.state, next, (effect, after) => this.perform(effect, after));
      }
    } finally {
      this.feeding = false;
    }
  }

  /** Carries out one effect; a commit's outcome comes back as a later input. */
  private perform(effect: LineEffect, after: LineState): LineInput | void {
    // ENQ, a frame, EOT (or a bare record) leave more than noise and a timer behind: the session is talking.
    if (effect.kind !== 'noise' && effect.kind !== 'arm-timer') this.traffic++;
    switch (effect.kind) {
      case 'write':
        this.ctx.transport.write(effect.data).catch((err: Error) => this.ctx.log.warn({ err: err.message }, 'astm write failed'));
        return;
      case 'arm-timer':
        return this.arm(effect.timer, effect.ms);
      case 'cancel-timer':
        return this.cancelTimers(effect.timer);
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
      case 'delivered':
        return this.twoWay?.delivered(effect.id);
      case 'failed':
        return this.twoWay?.failed(effect.id, effect.reason);
    }
  }

  /**
   * Durable before ACK: ok only when the store committed the message (invariant 1). Text without any H record is
   * not a message at all (noise, another protocol on the line): it is counted and sampled, and its completing frame
   * is NAKed, never ACKed. Where there is no frame to answer (bare records, a message that EOT completed) a failed
   * commit is retried, so junk is dropped there once counted. A committed host query is answered (invariant 9).
   */
  private commit(raw: Buffer, text: Buffer, committing: LineState, then: (ok: boolean) => void): void {
    if (hasHeaderRecord(text)) {
      const receivedAt = this.ctx.clock.monotonic();
      this.path.commit(
        raw,
        () => this.decode(text, this.ctx.profile, this.options),
        (outcome) => {
          then(outcome.kind === 'committed');
          const queries = outcome.kind === 'committed' ? outcome.decoded.queries : undefined;
          if (queries?.length) this.twoWay?.answer(queries, text.toString(this.options.charset === 'utf8' ? 'utf8' : 'latin1'), receivedAt);
        },
      );
      return;
    }
    const answerable = 'completing' in committing.receiver && committing.receiver.completing !== null;
    this.path.junk(raw, 'not an ASTM message: no H header record', junkLabel, () => then(!answerable));
  }

  private arm(timer: LineTimer, ms: number): void {
    this.cancelTimers(timer);
    this.timers.set(
      timer,
      this.ctx.clock.setTimeout(() => {
        this.timers.delete(timer);
        if (this.running) this.feed({ kind: 'timeout', timer });
      }, ms),
    );
  }

  private cancelTimers(only?: LineTimer): void {
    for (const [name, handle] of this.timers) {
      if (only !== undefined && name !== only) continue;
      this.ctx.clock.clearTimeout(handle);
      this.timers.delete(name);
    }
  }
}

/** Two-way for an instrument whose options ask for it and whose gateway has a LIMS to ask. */
function twoWayOf(ctx: DriverContext, options: AstmOptions, feed: (input: LineInput) => void): AstmTwoWay | null {
  if (!ctx.orders || (!options.orders.query && !options.orders.download)) return null;
  const desk = orderDeskOf(ctx, options.orders);
  return new AstmTwoWay({
    desk,
    get profile() {
      return ctx.profile;
    },
    options,
    clock: ctx.clock,
    log: ctx.log,
    onEvent: (event) => ctx.onEvent(event),
    send: (message) => feed({ kind: 'send', message }),
    cancel: (id, reason) => feed({ kind: 'cancel', id, reason }),
  });
}
