// The thin HL7 runner: MLLP bytes in, commit through the IngestPort, acknowledgments out. It knows no
// protocol rule; mllp.ts, message.ts and ack.ts do. Never logs PID fields: only control ids and counts.
import type { DriverContext, DriverRunner, IngestOutcome } from '../../src/runner-contract.js';
import { JunkSampler } from '../../src/junk-sampler.js';
import type { AckOutcome } from './ack.js';
import { decodeHl7Message, type Hl7Decoding } from './message.js';
import { startsLikeMessage } from './message-start.js';
import { initialMllpState, mllpStep, type MllpEffect, type MllpState } from './mllp.js';
import { hl7Options, type Hl7Options, type Hl7OptionsInput } from './options.js';
import { refusalFor, repliesFor } from './reply.js';

/** Binds the HL7 driver to an instrument's transport and store. */
export function createHl7Runner(ctx: DriverContext, options: Hl7OptionsInput | Hl7Options = {}): DriverRunner {
  return new Hl7Runner(ctx, hl7Options(options));
}

class Hl7Runner implements DriverRunner {
  readonly protocol = 'hl7';
  private state: MllpState = initialMllpState;
  private running = false;
  private readonly junk: JunkSampler;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: Hl7Options,
  ) {
    this.junk = ctx.junk ?? new JunkSampler();
  }

  start(): void {
    this.running = true;
    this.ctx.transport.onData((data) => this.onData(data));
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.writes;
  }

  private onData(data: Buffer): void {
    if (!this.running) return;
    this.ctx.onEvent({ kind: 'bytes', count: data.length });
    const step = mllpStep(this.state, data, this.options.maxMessageBytes);
    this.state = step.state;
    for (const e of step.effects) this.onEffect(e);
  }

  private onEffect(e: MllpEffect): void {
    if (e.kind === 'message') this.onMessage(e.raw);
    else if (e.kind === 'oversize') {
      this.ctx.onEvent({ kind: 'nak', reason: 'message too large' });
      this.ctx.log.warn({ length: e.length, maxMessageBytes: this.options.maxMessageBytes }, 'hl7 message over the size limit refused');
      this.send(refusalFor(e.head, e.length, this.ctx.clock.now(), this.options));
    } else if (e.kind === 'truncated') this.ctx.onEvent({ kind: 'discarded', reason: `MLLP block of ${e.length} bytes cut short` });
    else if (e.count > 0) this.ctx.onEvent({ kind: 'discarded', reason: `${e.count} bytes outside MLLP blocks` });
  }

  private onMessage(raw: Buffer): void {
    const decoding = decodeHl7Message(raw, this.ctx.profile, this.options);
    if (!startsLikeMessage(raw)) return this.onJunk(raw, decoding);
    const outcome = this.commit(raw, decoding);
    const controlId = decoding.header?.controlId;
    if (outcome.kind === 'committed') {
      this.ctx.log.info({ controlId, results: decoding.decoded.results.length, rejected: outcome.rejections.length }, 'hl7 message committed');
    } else {
      this.ctx.onEvent({ kind: 'commit-failed', reason: outcome.reason });
      this.ctx.log.warn({ controlId, reason: outcome.reason }, 'hl7 message not committed; the sender keeps it');
    }
    this.send(repliesFor(decoding, outcome, this.ctx.clock.now(), this.options));
  }

  // Not a message at all: refused and counted; the first of each interval is journaled as a sample, saying how many
  // were only counted since the one before.
  private onJunk(raw: Buffer, decoding: Hl7Decoding): void {
    const reason = decoding.decoded.rejections[0]?.reason ?? 'not an HL7 message';
    const decision = this.junk.next(this.ctx.clock.now());
    this.ctx.onEvent({ kind: 'discarded', reason: 'not an HL7 message' });
    if (decision.kind === 'journal') {
      const more = decision.unsampled > 0 ? `; ${decision.unsampled} more blocks like it since the last sample were counted, not kept` : '';
      this.commit(raw, { ...decoding, decoded: { results: [], rejections: [{ reason: `${reason}${more}` }] } });
    }
    this.ctx.log.warn({ bytes: raw.length, sampled: decision.kind === 'journal', reason }, 'hl7 block that is not a message refused');
    this.send(repliesFor(decoding, { kind: 'refused', reason }, this.ctx.clock.now(), this.options));
  }

  // Invariant 1: the accepting acknowledgment depends on this outcome alone; a throwing port is a failed commit.
  private commit(raw: Buffer, decoding: Hl7Decoding): AckOutcome {
    if (!this.ctx.accepting()) return { kind: 'unavailable', reason: 'store not accepting' };
    let outcome: IngestOutcome;
    try {
      outcome = this.ctx.ingest({
        capture: { instrumentId: this.ctx.profile.id, protocol: 'hl7', receivedAt: this.ctx.clock.now(), raw },
        results: decoding.decoded.results,
        rejections: decoding.decoded.rejections,
      });
    } catch (error) {
      return { kind: 'unavailable', reason: `ingest failed: ${(error as Error).message}` };
    }
    if (outcome.kind === 'unavailable') return { kind: 'unavailable', reason: outcome.reason };
    this.ctx.onEvent({ kind: 'message', summary: outcome.summary });
    return { kind: 'committed', results: decoding.decoded.results.length, rejections: outcome.rejections };
  }

  private send(frames: Buffer[]): void {
    for (const frame of frames) {
      this.writes = this.writes.then(() => this.ctx.transport.write(frame)).catch((error: unknown) => this.ctx.log.warn({ err: error }, 'hl7 ack write failed'));
    }
  }
}
