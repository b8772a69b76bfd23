// An analyzer playing the sender's side of LIS01-A2 over any transport: ENQ, frames split at the size
// limit with ETB, real checksums, the 15 s reply timeout, up to 6 retransmissions then abort, EOT; with
// faults to inject. Timers run on an injected clock, so tests decide when 15 s have passed.
import type { Clock } from '../../src/clock.js';
import type { Transport } from '../../src/transport/transport.js';
import { ACK, ENQ, EOT, FRAME_OVERHEAD, encodeFrame } from './frame.js';

/** Faults to inject; frame indexes count the frames of one session from 0; each fires once. */
export interface EmulatorFaults {
  /** Send these frames first with a wrong checksum (the receiver must NAK, we retransmit). */
  corruptChecksum?: number[];
  /** Ignore the receiver's reply to these frames: we time out, send EOT and resend the session. */
  dropAck?: number[];
  /** After these frames are ACKed, send them again with the same frame number. */
  duplicateFrame?: number[];
  /** Wait before sending a frame (a pause longer than 30 s makes the receiver discard). */
  pause?: { beforeFrame: number; ms: number }[];
}

/** How the emulated analyzer talks. */
export interface EmulatorOptions {
  /** Whole frame size limit (247: 240 text characters per frame, LIS01-A2 8.3.1). */
  maxFrameBytes?: number;
  /** `message`: split the message text at the limit; `record`: one record per frame, ETB until the last. */
  framesPer?: 'message' | 'record';
  charset?: 'latin1' | 'utf8';
  /** LIS01-A2 8.5.2: 15 s. */
  replyTimeoutMs?: number;
  /** LIS01-A2 8.5.1: a frame is retransmitted at most 6 times, then the transfer is aborted. */
  maxRetransmissions?: number;
  /** Wait after an ENQ is NAKed (busy) before the next ENQ (LIS01-A2 8.2.3: at least 10 s). */
  busyRetryMs?: number;
  /** Sessions restarted after a timeout before giving up. */
  maxRestarts?: number;
  /** Contention (both sides sent ENQ, LIS01-A2 8.2.7): the instrument re-sends ENQ after 1 s; the computer yields 20 s. */
  role?: 'instrument' | 'computer';
  faults?: EmulatorFaults;
}

/** What became of one session. */
export type EmulatorOutcome =
  { kind: 'sent'; frames: number; retransmissions: number; restarts: number } | { kind: 'aborted'; reason: string; restarts: number };

type Reply = 'ACK' | 'NAK' | 'EOT' | 'ENQ' | 'timeout';

/** Splits a message's text into frames' texts at the limit, or one record per frame. */
export function frameTexts(text: Buffer, maxFrameBytes: number, framesPer: 'message' | 'record'): Buffer[] {
  const size = maxFrameBytes - FRAME_OVERHEAD;
  const pieces = framesPer === 'record' ? splitAfterCr(text) : [text];
  const out: Buffer[] = [];
  for (const piece of pieces) for (let i = 0; i < piece.length; i += size) out.push(piece.subarray(i, i + size));
  return out;
}

/** The sender side of an analyzer. */
export class AstmEmulator {
  private readonly replies: number[] = [];
  private waiter: ((reply: Reply) => void) | null = null;
  /** Where bytes go while no session of ours holds the line (the analyzer's receiver, emulator-receiver.ts). */
  private receiver: ((data: Buffer) => void) | null = null;
  private sending = false;
  private eotAt: number | null = null;
  private readonly faults: Required<EmulatorFaults>;
  private readonly o: Required<Omit<EmulatorOptions, 'faults'>>;

  constructor(
    private readonly transport: Pick<Transport, 'write' | 'onData'>,
    private readonly clock: Clock,
    options: EmulatorOptions = {},
  ) {
    this.o = {
      maxFrameBytes: 247,
      framesPer: 'message',
      charset: 'latin1',
      replyTimeoutMs: 15_000,
      maxRetransmissions: 6,
      busyRetryMs: 10_000,
      maxRestarts: 3,
      role: 'instrument',
      ...withoutUndefined(options),
    };
    const f = options.faults ?? {};
    this.faults = {
      corruptChecksum: [...(f.corruptChecksum ?? [])],
      dropAck: [...(f.dropAck ?? [])],
      duplicateFrame: [...(f.duplicateFrame ?? [])],
      pause: [...(f.pause ?? [])],
    };
    transport.onData((data) => this.onData(data));
  }

  /** When the last session that sent everything wrote its EOT (epoch ms), or null. */
  get lastEotAt(): number | null {
    return this.eotAt;
  }

  /** Hands the bytes that arrive while this emulator is not sending to `receiver` (the analyzer's receiving side). */
  listen(receiver: (data: Buffer) => void): void {
    this.receiver = receiver;
  }

  /**
   * Sends messages (each the text of H..L records, CR-terminated) in one session, restarting it after a timeout.
   * `contended`: the host bid at the same instant (its ENQ crossed ours): LIS01-A2 8.2.7, we bid again after 1 s.
   */
  async send(messages: readonly (string | Buffer)[], how: { contended?: boolean } = {}): Promise<EmulatorOutcome> {
    const frames = this.buildFrames(messages);
    for (let restarts = 0; ; restarts++) {
      const outcome = await this.session(frames, restarts === 0 && how.contended === true);
      if (outcome.kind === 'sent') return { ...outcome, restarts };
      if (outcome.reason !== 'timeout' || restarts >= this.o.maxRestarts) return { ...outcome, restarts };
    }
  }

  private buildFrames(messages: readonly (string | Buffer)[]): { text: Buffer; final: boolean }[] {
    const out: { text: Buffer; final: boolean }[] = [];
    for (const m of messages) {
      const text = typeof m === 'string' ? Buffer.from(m, this.o.charset) : m;
      const texts = frameTexts(text, this.o.maxFrameBytes, this.o.framesPer);
      texts.forEach((t, i) => out.push({ text: t, final: i === texts.length - 1 }));
    }
    return out;
  }

  private async session(
    frames: { text: Buffer; final: boolean }[],
    contended: boolean,
  ): Promise<{ kind: 'sent'; frames: number; retransmissions: number } | { kind: 'aborted'; reason: string }> {
    this.sending = true;
    try {
      return await this.transfer(frames, contended);
    } finally {
      this.sending = false;
    }
  }

  private async transfer(
    frames: { text: Buffer; final: boolean }[],
    contended: boolean,
  ): Promise<{ kind: 'sent'; frames: number; retransmissions: number } | { kind: 'aborted'; reason: string }> {
    const established = await this.establish(contended);
    if (established !== 'ok') return { kind: 'aborted', reason: established };
    let retransmissions = 0;
    for (let i = 0; i < frames.length; i++) {
      const frame = encodeFrame((i + 1) % 8, frames[i]!.text, frames[i]!.final);
      const sent = await this.sendFrame(i, frame);
      if (sent.kind === 'aborted') {
        await this.endSession();
        return { kind: 'aborted', reason: sent.reason };
      }
      retransmissions += sent.retransmissions;
      if (take(this.faults.duplicateFrame, i)) {
        await this.write(frame);
        await this.reply();
      }
    }
    this.eotAt = this.clock.now();
    await this.endSession();
    return { kind: 'sent', frames: frames.length, retransmissions };
  }

  /** LIS01-A2 8.2: ENQ until ACK; NAK means busy; ENQ back is contention. */
  private async establish(contended: boolean): Promise<'ok' | 'timeout' | 'busy'> {
    for (let attempt = 0; attempt < 6; attempt++) {
      await this.write(Buffer.from([ENQ]));
      const reply = contended && attempt === 0 ? 'ENQ' : await this.reply();
      if (reply === 'ACK') return 'ok';
      if (reply === 'timeout') {
        await this.endSession();
        return 'timeout';
      }
      const ms = reply === 'ENQ' ? (this.o.role === 'instrument' ? 1_000 : 20_000) : this.o.busyRetryMs;
      await this.sleep(ms);
    }
    return 'busy';
  }

  private async sendFrame(index: number, frame: Buffer): Promise<{ kind: 'ok'; retransmissions: number } | { kind: 'aborted'; reason: string }> {
    const pause = this.faults.pause.findIndex((p) => p.beforeFrame === index);
    if (pause >= 0) await this.sleep(this.faults.pause.splice(pause, 1)[0]!.ms);
    for (let attempt = 0; attempt <= this.o.maxRetransmissions; attempt++) {
      await this.write(take(this.faults.corruptChecksum, index) ? corrupt(frame) : frame);
      const reply = take(this.faults.dropAck, index) ? await this.ignoreReply() : await this.reply();
      // LIS01-A2 8.3.4: EOT as a reply is an ACK with a request to stop, which an analyzer may ignore.
      if (reply === 'ACK' || reply === 'EOT') return { kind: 'ok', retransmissions: attempt };
      if (reply === 'timeout') return { kind: 'aborted', reason: 'timeout' };
    }
    return { kind: 'aborted', reason: `frame ${index} refused ${this.o.maxRetransmissions + 1} times` };
  }

  private onData(data: Buffer): void {
    if (!this.sending && this.receiver) return this.receiver(data);
    for (const byte of data) this.replies.push(byte);
    const waiter = this.waiter;
    if (waiter && this.replies.length > 0) {
      this.waiter = null;
      waiter(classify(this.replies.shift()!));
    }
  }

  /** The next reply; any character other than ACK, NAK, EOT or ENQ counts as NAK (LIS01-A2 8.3.4). */
  private reply(): Promise<Reply> {
    const queued = this.replies.shift();
    if (queued !== undefined) return Promise.resolve(classify(queued));
    return new Promise((resolve) => {
      const handle = this.clock.setTimeout(() => {
        this.waiter = null;
        resolve('timeout');
      }, this.o.replyTimeoutMs);
      this.waiter = (reply) => {
        this.clock.clearTimeout(handle);
        resolve(reply);
      };
    });
  }

  /** A lost reply: whatever arrives is dropped, and the sender times out. */
  private async ignoreReply(): Promise<Reply> {
    await this.sleep(this.o.replyTimeoutMs);
    this.replies.length = 0;
    return 'timeout';
  }

  private async write(data: Buffer): Promise<void> {
    this.replies.length = 0;
    await this.transport.write(data);
  }

  /** LIS01-A2 8.4: EOT ends the session; what the host sends from then on is no reply to us (the host may bid at once). */
  private async endSession(): Promise<void> {
    this.sending = false;
    await this.write(Buffer.from([EOT]));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }
}

function classify(byte: number): Reply {
  if (byte === ACK) return 'ACK';
  if (byte === EOT) return 'EOT';
  if (byte === ENQ) return 'ENQ';
  return 'NAK';
}

/** Flips the checksum's second digit so the frame stays well-formed but fails verification. */
function corrupt(frame: Buffer): Buffer {
  const copy = Buffer.from(frame);
  const at = copy.length - 3;
  copy[at] = copy[at] === 0x30 ? 0x31 : 0x30;
  return copy;
}

function take(list: number[], index: number): boolean {
  const at = list.indexOf(index);
  if (at < 0) return false;
  list.splice(at, 1);
  return true;
}

function splitAfterCr(text: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) if (text[i] === 0x0d) [out[out.length], start] = [text.subarray(start, i + 1), i + 1];
  if (start < text.length) out.push(text.subarray(start));
  return out;
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([k, v]) => v !== undefined && k !== 'faults')) as Partial<T>;
}
