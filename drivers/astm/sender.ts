// The sender's side of the LIS01-A2 link layer as a pure state machine, in the shape of the receiver (link.ts): the
// analyzer's replies, timer expiries and the line's readiness come in as inputs; writes, timers and what became of
// each message go out as effects. labgate is the "computer system" of LIS01-A2: when both sides bid at once it yields
// (8.2.7), so an analyzer's results never wait behind an answer.
import { ACK, ENQ, EOT, FRAME_OVERHEAD, NAK, encodeFrame } from './frame.js';

/** LIS01-A2 8.5.2: the sender waits 15 s for a reply to its ENQ or to a frame, then gives up (EOT). */
export const SENDER_TIMEOUT_MS = 15_000;
/** LIS01-A2 8.2.3: after a NAK to its ENQ (receiver busy) the sender waits at least 10 s before bidding again. */
export const BUSY_RETRY_MS = 10_000;
/** LIS01-A2 8.2.7.2: after contention the computer system waits 20 s, unless the instrument's transfer ends first. */
export const CONTENTION_RETRY_MS = 20_000;
/** LIS01-A2 8.5.1.2: a frame is retransmitted at most 6 times; a 7th refusal aborts the message. */
export const MAX_RETRANSMISSIONS = 6;
/** Bids answered busy before the message is given up (the caller may queue it again later). */
export const MAX_BIDS = 6;

/** A message to send: its text (records, each ended by CR) as bytes, and an id its outcome is reported under. */
export interface Outgoing {
  readonly id: string;
  readonly text: Buffer;
}

/** What the sender needs from the instrument's options. */
export interface SenderConfig {
  /** Whole frame size STX..LF the analyzer accepts. */
  readonly maxFrameBytes: number;
}

interface Common {
  readonly config: SenderConfig;
  /** Messages not yet sent; the first is the one being bid for or sent. */
  readonly queue: readonly Outgoing[];
}

/** Nothing in progress; bids when the line is free and something is queued. */
export interface Idle extends Common {
  readonly phase: 'idle';
  /** Bids the analyzer answered busy for the first message so far. */
  readonly bids: number;
}

/** Not bidding for a while: the analyzer answered busy (NAK) or bid at the same time (contention). */
export interface Waiting extends Common {
  readonly phase: 'waiting';
  readonly reason: 'busy' | 'contention';
  /** Bids answered busy so far for the first message. */
  readonly bids: number;
}

/** LIS01-A2 8.2: ENQ sent, waiting for ACK, NAK or ENQ. */
export interface Bidding extends Common {
  readonly phase: 'bidding';
  readonly bids: number;
}

/** LIS01-A2 8.3: a frame sent, waiting for its reply. */
export interface Transferring extends Common {
  readonly phase: 'transferring';
  readonly frames: readonly Buffer[];
  /** The frame waiting for its reply. */
  readonly index: number;
  readonly retransmissions: number;
}

/** The sender's states. */
export type SenderState = Idle | Waiting | Bidding | Transferring;

export type SenderInput =
  /** Queue a message (sent after those before it). */
  | { kind: 'send'; message: Outgoing }
  /** Drop a queued message that has not started (reported failed with `reason`); one being bid for or sent is finished. */
  | { kind: 'cancel'; id: string; reason: string }
  /** The line is neutral: bid if idle with something queued. */
  | { kind: 'bid' }
  /** The instrument has just ended a transfer: a contention wait is over. */
  | { kind: 'line-free' }
  /** One byte from the analyzer while bidding or transferring. */
  | { kind: 'reply'; byte: number }
  | { kind: 'timeout' };

export type SenderEffect =
  | { kind: 'write'; data: Buffer }
  | { kind: 'arm-timer'; ms: number }
  | { kind: 'cancel-timer' }
  /** The analyzer ACKed the message's last frame (LIS01-A2: it has the message). */
  | { kind: 'delivered'; id: string }
  | { kind: 'failed'; id: string; reason: string };

export type SenderStep = { state: SenderState; effects: SenderEffect[] };

/** A sender with nothing to send. */
export function initialSenderState(config: SenderConfig): SenderState {
  return { phase: 'idle', config, queue: [], bids: 0 };
}

/** True while the analyzer's bytes are replies to the sender (it holds the line). */
export function holdsLine(s: SenderState): boolean {
  return s.phase === 'bidding' || s.phase === 'transferring';
}

/** One transition of the sender. Pure: the given state is left as it was. */
export function senderStep(s: SenderState, input: SenderInput): SenderStep {
  const effects: SenderEffect[] = [];
  switch (input.kind) {
    case 'send':
      return { state: { ...s, queue: [...s.queue, input.message] }, effects };
    case 'cancel':
      return { state: cancel(s, input.id, input.reason, effects), effects };
    case 'bid':
      return { state: s.phase === 'idle' && s.queue.length > 0 ? bid(s, effects) : s, effects };
    case 'line-free':
      return { state: s.phase === 'waiting' && s.reason === 'contention' ? idle(s, s.queue, effects, true, s.bids) : s, effects };
    case 'reply':
      if (s.phase === 'bidding') return { state: onBidReply(s, input.byte, effects), effects };
      if (s.phase === 'transferring') return { state: onFrameReply(s, input.byte, effects), effects };
      return { state: s, effects };
    case 'timeout':
      return { state: timeout(s, effects), effects };
  }
}

function cancel(s: SenderState, id: string, reason: string, effects: SenderEffect[]): SenderState {
  const started = holdsLine(s) ? s.queue[0]?.id : undefined;
  if (id === started || !s.queue.some((m) => m.id === id)) return s;
  const queue = s.queue.filter((m) => m.id !== id);
  effects.push({ kind: 'failed', id, reason });
  // A wait was for the first message: with it gone the next one starts afresh.
  if (s.phase === 'waiting' && s.queue[0]?.id === id) return idle(s, queue, effects, true);
  if (s.phase === 'idle') return { ...s, queue, bids: s.queue[0]?.id === id ? 0 : s.bids };
  return { ...s, queue };
}

function bid(s: Idle, effects: SenderEffect[]): Bidding {
  effects.push(write(ENQ), { kind: 'arm-timer', ms: SENDER_TIMEOUT_MS });
  return { phase: 'bidding', config: s.config, queue: s.queue, bids: s.bids };
}

/** LIS01-A2 8.2: ACK establishes; NAK is busy; ENQ is contention, where the instrument has priority (8.2.7.1). */
function onBidReply(s: Bidding, byte: number, effects: SenderEffect[]): SenderState {
  if (byte === ACK) {
    const frames = framesOf(s.queue[0]!.text, s.config.maxFrameBytes);
    effects.push(write(frames[0]!), { kind: 'arm-timer', ms: SENDER_TIMEOUT_MS });
    return { phase: 'transferring', config: s.config, queue: s.queue, frames, index: 0, retransmissions: 0 };
  }
  if (byte === NAK) {
    const bids = s.bids + 1;
    if (bids >= MAX_BIDS) return give(s, `the analyzer answered busy ${bids} times`, effects, false);
    effects.push({ kind: 'arm-timer', ms: BUSY_RETRY_MS });
    return { phase: 'waiting', config: s.config, queue: s.queue, reason: 'busy', bids };
  }
  if (byte === ENQ) {
    // The contention ENQ is not answered: the instrument bids again after 1 s, and that ENQ reaches the receiver.
    effects.push({ kind: 'arm-timer', ms: CONTENTION_RETRY_MS });
    return { phase: 'waiting', config: s.config, queue: s.queue, reason: 'contention', bids: s.bids };
  }
  // Anything else (line noise) is no reply: the timer keeps running.
  return s;
}

/** LIS01-A2 8.3.4: ACK (or EOT, an ACK with a request to stop) moves on; any other character is a NAK. */
function onFrameReply(s: Transferring, byte: number, effects: SenderEffect[]): SenderState {
  if (byte === ACK || byte === EOT) {
    const index = s.index + 1;
    if (index === s.frames.length) {
      effects.push({ kind: 'cancel-timer' }, { kind: 'delivered', id: s.queue[0]!.id }, write(EOT));
      return idle(s, s.queue.slice(1), effects, false);
    }
    effects.push(write(s.frames[index]!), { kind: 'arm-timer', ms: SENDER_TIMEOUT_MS });
    return { ...s, index, retransmissions: 0 };
  }
  if (s.retransmissions >= MAX_RETRANSMISSIONS) return give(s, `frame ${s.index + 1} refused ${MAX_RETRANSMISSIONS + 1} times`, effects, true);
  effects.push(write(s.frames[s.index]!), { kind: 'arm-timer', ms: SENDER_TIMEOUT_MS });
  return { ...s, retransmissions: s.retransmissions + 1 };
}

function timeout(s: SenderState, effects: SenderEffect[]): SenderState {
  if (s.phase === 'waiting') return idle(s, s.queue, effects, false, s.bids);
  // LIS01-A2 8.5.2: no reply within 15 s: the sender ends the transfer (termination phase).
  if (s.phase === 'bidding') return give(s, 'no reply to ENQ within 15 s', effects, true);
  if (s.phase === 'transferring') return give(s, `no reply to frame ${s.index + 1} within 15 s`, effects, true);
  return s;
}

/** Gives the first message up; `eot` ends a transfer that had begun (or an unanswered bid) with EOT. */
function give(s: Bidding | Transferring, reason: string, effects: SenderEffect[], eot: boolean): Idle {
  effects.push({ kind: 'cancel-timer' }, { kind: 'failed', id: s.queue[0]!.id, reason });
  if (eot) effects.push(write(EOT));
  return { phase: 'idle', config: s.config, queue: s.queue.slice(1), bids: 0 };
}

function idle(s: SenderState, queue: readonly Outgoing[], effects: SenderEffect[], cancelTimer: boolean, bids = 0): Idle {
  if (cancelTimer) effects.push({ kind: 'cancel-timer' });
  return { phase: 'idle', config: s.config, queue, bids };
}

/**
 * LIS01-A2 8.3.1: the frames of a message. Each record ends a frame with ETX; a record longer than a frame holds is
 * split into ETB frames first. Frame numbers start at 1 and count modulo 8 (8.3.2).
 */
export function framesOf(text: Buffer, maxFrameBytes: number): Buffer[] {
  const room = maxFrameBytes - FRAME_OVERHEAD;
  const frames: Buffer[] = [];
  let start = 0;
  while (start < text.length) {
    const cr = text.indexOf(0x0d, start);
    const end = cr < 0 ? text.length : cr + 1;
    for (let at = start; at < end; at += room) {
      const piece = text.subarray(at, Math.min(end, at + room));
      frames.push(encodeFrame((frames.length + 1) % 8, piece, at + room >= end));
    }
    start = end;
  }
  return frames;
}

function write(byte: number | Buffer): SenderEffect {
  return { kind: 'write', data: typeof byte === 'number' ? Buffer.from([byte]) : byte };
}
