// The thin HL7 runner: framed bytes in (MLLP, or bare segments ended by silence), commit through the commit path,
// acknowledgments out; for a two-way instrument a committed host query goes to two-way.ts (whose answer is its
// acknowledgment) and the analyzer's acceptances of what labgate sent come back to it. It knows no protocol rule;
// framing.ts, message.ts, ack.ts and two-way.ts do. Never logs PID fields: only control ids and counts.
import { CommitPath } from '../../src/commit-path.js';
import type { DriverContext, DriverEvent, DriverRunner } from '../../src/runner-contract.js';
import type { AckOutcome } from './ack.js';
import { Backlog } from './backlog.js';
import { decodeHl7Message, undecodedMessage, type Hl7Decoding } from './message.js';
import { startsLikeMessage } from './message-start.js';
import { awaitsSilence, framingFlush, framingStep, initialFramingState, type FramingEffect, type FramingState } from './framing.js';
import { OrderPort } from './order-port.js';
import { hl7Options, type Hl7Options, type Hl7OptionsInput } from './options.js';
import { refusalFor, repliesFor, type Replies } from './reply.js';
import { Hl7TwoWay } from './two-way.js';
import { orderDeskOf } from '../../src/orders/desk-of.js';

/** Decodes one message's payload; injected so a test can hand the runner a decoder that fails. */
export type Hl7MessageDecoder = typeof decodeHl7Message;

/** Binds the HL7 driver to an instrument's transport and store. */
export function createHl7Runner(ctx: DriverContext, options: Hl7OptionsInput | Hl7Options = {}, decode: Hl7MessageDecoder = decodeHl7Message): DriverRunner {
  return new Hl7Runner(ctx, hl7Options(options), decode);
}

const junkLabel = { event: 'not an HL7 message', one: 'hl7 block', many: 'blocks' };

class Hl7Runner implements DriverRunner {
  readonly protocol = 'hl7';
  private state: FramingState;
  private silence: unknown;
  private running = false;
  private readonly path: CommitPath;
  /** Messages waiting for the outcome of the one before: each is answered in the order it arrived (bounded: backlog.ts). */
  private readonly queue: Backlog<{ raw: Buffer; receivedAt: number }>;
  private busy = false;
  private writes: Promise<void> = Promise.resolve();
  private readonly twoWay: Hl7TwoWay | null;
  private readonly orderPort: OrderPort | null;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: Hl7Options,
    private readonly decode: Hl7MessageDecoder,
  ) {
    this.path = new CommitPath(ctx, 'hl7');
    this.queue = new Backlog(ctx, (m) => m.raw.length);
    this.state = initialFramingState(options.framing);
    const twoWay = twoWayOf(ctx, options, (replies) => this.send(replies));
    this.twoWay = twoWay?.twoWay ?? null;
    this.orderPort = twoWay?.port ?? null;
  }

  start(): void {
    this.running = true;
    this.ctx.transport.onData((data) => this.onData(data));
    this.ctx.transport.onClose(() => (this.twoWay?.stop(), this.orderPort?.stop()));
    this.orderPort?.start();
    this.twoWay?.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.twoWay?.stop();
    this.orderPort?.stop();
    if (this.silence !== undefined) this.ctx.clock.clearTimeout(this.silence);
    await this.path.settled();
    await this.writes;
  }

  private onData(data: Buffer): void {
    if (!this.running) return;
    this.ctx.onEvent({ kind: 'bytes', count: data.length });
    const step = framingStep(this.state, data, this.options.maxMessageBytes);
    // A block (whole, cut short or too large) is protocol traffic; bytes outside blocks are not.
    if (step.effects.some((e) => e.kind !== 'noise')) this.ctx.transport.talking?.();
    this.apply(step);
  }

  // A bare message ends when the next one starts or the line falls silent for idleMs.
  private apply(step: { state: FramingState; effects: FramingEffect[] }): void {
    this.state = step.state;
    for (const e of step.effects) this.onEffect(e);
    if (this.silence !== undefined) this.ctx.clock.clearTimeout(this.silence);
    this.silence = undefined;
    if (this.running && awaitsSilence(this.state)) {
      this.silence = this.ctx.clock.setTimeout(() => ((this.silence = undefined), this.apply(framingFlush(this.state))), this.options.idleMs);
    }
  }

  private onEffect(e: FramingEffect): void {
    if (e.kind === 'message') {
      // A query's deadline runs from the moment its bytes were complete, not from when its turn came.
      this.queue.hold({ raw: e.raw, receivedAt: this.ctx.clock.monotonic() });
      this.next();
    } else if (e.kind === 'oversize') {
      this.ctx.onEvent({ kind: 'nak', reason: 'message too large' });
      this.ctx.log.warn({ length: e.length, maxMessageBytes: this.options.maxMessageBytes }, 'hl7 message over the size limit refused');
      this.send(refusalFor(e.head, e.length, this.ctx.clock.now(), this.options));
    } else if (e.kind === 'truncated') this.ctx.onEvent({ kind: 'discarded', reason: `MLLP block of ${e.length} bytes cut short` });
    else if (e.count > 0) this.ctx.onEvent({ kind: 'discarded', reason: `${e.count} bytes outside MLLP blocks` });
  }

  // One message at a time, in a loop rather than by recursion: an outcome that arrives at once (today's store) takes
  // the next message in the same loop, so a chunk of thousands of messages keeps the stack flat.
  private next(): void {
    while (!this.busy && this.queue.length > 0) {
      // Busy before taking: taking may resume reading, and what that reads at once must wait its turn.
      this.busy = true;
      const { raw, receivedAt } = this.queue.take()!;
      let inLoop = true;
      this.onMessage(raw, receivedAt, () => {
        this.busy = false;
        if (!inLoop) this.next();
      });
      inLoop = false;
    }
  }

  // A block that is not a message at all is refused, counted and sampled; a message is committed, then answered
  // from the commit's outcome alone (invariant 1). A decoder that fails leaves the answer to what the header says.
  private onMessage(raw: Buffer, receivedAt: number, done: () => void): void {
    const now = (): number => this.ctx.clock.now();
    // The analyzer accepting (or not) a message labgate sent: two-way's, never journaled nor answered.
    if (this.twoWay?.acknowledged(raw)) return done();
    if (!startsLikeMessage(raw)) {
      const decoding = undecodedMessage(raw, this.options);
      const reason = decoding.decoded.rejections[0]?.reason ?? 'not an HL7 message';
      return this.path.junk(raw, reason, junkLabel, () => (this.send(repliesFor(decoding, { kind: 'refused', reason }, now(), this.options)), done()));
    }
    let decoding: Hl7Decoding | undefined;
    const decode = (): Hl7Decoding => (decoding = this.decode(raw, this.ctx.profile, this.options));
    this.path.commit(
      raw,
      () => decode().decoded,
      (outcome) => {
        // A query this instrument answers is acknowledged by its answer (QCK^Q02, RSP^K11), decided in time by two-way.
        if (outcome.kind === 'committed' && this.twoWay && decoding?.kind === 'query' && outcome.decoded.rejections.length === 0) {
          this.twoWay.answer(decoding, receivedAt);
          return done();
        }
        const ack: AckOutcome =
          outcome.kind === 'committed' ? { kind: 'committed', results: outcome.decoded.results.length, rejections: outcome.decoded.rejections } : outcome;
        this.send(repliesFor(decoding ?? undecodedMessage(raw, this.options), ack, now(), this.options));
        done();
      },
      () => ({ controlId: decoding?.header?.controlId }),
    );
  }

  // What the instrument's charset cannot carry was replaced (counted); what cannot be written at all is not sent and
  // the analyzer, unanswered, sends the message again. Neither log line holds any of the text.
  private send(replies: Replies): void {
    if (replies.substituted > 0) {
      this.ctx.onEvent({ kind: 'substituted', characters: replies.substituted });
      this.ctx.log.warn({ characters: replies.substituted }, "characters the instrument's charset cannot carry were replaced in an acknowledgment");
    }
    for (const reason of replies.refused) {
      this.ctx.onEvent({ kind: 'unwritten', reason });
      this.ctx.log.error({ reason }, 'hl7 acknowledgment not written');
    }
    for (const frame of replies.frames) {
      this.writes = this.writes
        .then(() => this.ctx.transport.write(frame))
        .catch((error: unknown) => this.ctx.log.warn({ err: error }, 'hl7 ack write failed'));
    }
  }
}

/** Two-way for an instrument whose options ask for it and whose gateway has a LIMS to ask. */
function twoWayOf(ctx: DriverContext, options: Hl7Options, send: (replies: Replies) => void): { twoWay: Hl7TwoWay; port: OrderPort | null } | null {
  if (!ctx.orders || (!options.orders.query && !options.orders.download)) return null;
  const common = { desk: orderDeskOf(ctx, options.orders), options, clock: ctx.clock, log: ctx.log, onEvent: (e: DriverEvent) => ctx.onEvent(e) };
  const at = options.orders.orderPort;
  if (at === null) return { twoWay: new Hl7TwoWay({ ...common, send }), port: null };
  if (!ctx.dial) throw new Error('orders.orderPort needs a connection the runtime opens (ctx.dial)');
  // Answers and downloads go to the analyzer's order port; its acknowledgments come back there.
  const port: OrderPort = new OrderPort({
    ...at,
    dial: ctx.dial,
    clock: ctx.clock,
    log: ctx.log,
    maxMessageBytes: options.maxMessageBytes,
    onMessage: (raw) => {
      if (!twoWay.acknowledged(raw)) ctx.onEvent({ kind: 'discarded', reason: 'a message on the order port that acknowledges nothing labgate sent' });
    },
    onDown: (reason) => twoWay.dropped(reason),
  });
  const twoWay: Hl7TwoWay = new Hl7TwoWay({
    ...common,
    unavailable: () => port.unavailable(),
    send: (replies) => {
      for (const reason of replies.refused) ctx.onEvent({ kind: 'unwritten', reason });
      for (const frame of replies.frames)
        port.write(frame).catch((err: unknown) => ctx.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'hl7 order port write failed'));
    },
  });
  return { twoWay, port };
}
