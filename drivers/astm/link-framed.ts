// The LIS01-A2 receiver's transitions (the `framing: link` half of link.ts). Bytes are consumed once, in
// order: each chunk is scanned from where the last one stopped, a frame in progress is held only up to
// maxFrameBytes, and a message only up to MAX_MESSAGE_BYTES.
import { ACK, CR, ENQ, EOT, LF, NAK, STX } from './frame.js';
import { readFrame, type FrameRead, type PartialFrame } from './frame-reader.js';
import { NextByte } from './next-byte.js';
import { emptyInbox, hold, holdFirst, MAX_MESSAGE_BYTES, takeOldest, type Inbox } from './inbox.js';
import type { LinkEffect, LinkEvent, LinkInput, Step } from './link-contract.js';
import type { Aborted, Committing, FramedState, Neutral, Receiving, Retrying } from './link-framed-state.js';
import { assemble, isComplete, newMessage, withFrame, withRefusal, type AcceptedFrame, type MessageSoFar } from './link-message.js';

/** LIS01-A2 8.5.2: the receiver waits 30 s for a frame or EOT, then discards and returns to neutral. */
export const RECEIVER_TIMEOUT_MS = 30_000;
/** LIS01-A2 8.5.1: after 6 retransmissions the sender aborts; a 7th refusal in a row means it has given up. */
export const MAX_REFUSALS = 7;
/** Delay before retrying the commit of a message that EOT completed (its frames are all ACKed already). */
export const HELD_RETRY_MS = 5_000;

type Input = Exclude<LinkInput, { kind: 'accepting' }>;
type Effects = LinkEffect[];

/** One transition of the LIS01-A2 receiver. */
export function framedStep(s: FramedState, input: Input): Step<FramedState> {
  const effects: Effects = [];
  switch (input.kind) {
    case 'bytes':
      if (s.phase === 'committing') return { state: { ...s, inbox: hold(s.inbox, input.data) }, effects };
      return { state: consume(s, input.data, effects), effects };
    case 'timeout':
      return { state: timeout(s, effects), effects };
    case 'committed':
      return { state: s.phase === 'committing' ? committed(s, input.ok, effects) : s, effects };
  }
}

/**
 * What one chunk's scan keeps: its noise, reported once, and whether an ENQ was answered with nothing since. A sender
 * waits for the answer to its ENQ, so ENQs that follow one in the same chunk are noise: a flood of them costs one
 * answer and one effect, not two effects a byte.
 */
interface ChunkScan {
  noise: number;
  answered: boolean;
}

/** Consumes a chunk until it ends or a message completes: the chunk's rest then waits in the inbox, before `after`. */
function consume(state: Exclude<FramedState, Committing>, data: Buffer, effects: Effects, after: Inbox = emptyInbox): FramedState {
  let s: FramedState = state;
  let pos = 0;
  const next = new NextByte(data);
  const scan: ChunkScan = { noise: 0, answered: false };
  while (pos < data.length && s.phase !== 'committing') {
    if (s.phase === 'neutral' || s.phase === 'retrying') {
      const at = skip(pos, next.at(ENQ, pos), next, scan);
      if (at === data.length) break;
      s = onEnq(s, scan, effects);
      pos = at + 1;
      continue;
    }
    if (s.partial !== null) {
      const r = readFrame(data, pos, s.partial, s.config.maxFrameBytes, s.config.deviations);
      s = onFrame(s, r, effects);
      pos = r.kind === 'incomplete' ? data.length : pos + r.used;
      continue;
    }
    // Bytes between frames (a stray LF after a CR-only trailer, line noise) are not frames: ignored.
    const at = skip(pos, Math.min(next.at(STX, pos), next.at(EOT, pos), next.at(ENQ, pos)), next, scan);
    if (at === data.length) break;
    pos = at + 1;
    scan.answered &&= data[at] === ENQ;
    if (data[at] === EOT) s = onEot(s, effects);
    else if (data[at] === ENQ) s = onEnq(s, scan, effects);
    else {
      const r = readFrame(data, at, null, s.config.maxFrameBytes, s.config.deviations);
      s = onFrame(s, r, effects);
      pos = r.kind === 'incomplete' ? data.length : at + r.used;
    }
  }
  if (scan.noise > 0) effects.push({ kind: 'noise', bytes: scan.noise });
  return s.phase === 'committing' ? { ...s, inbox: holdFirst(after, data.subarray(pos)) } : s;
}

/** Adds the bytes from `pos` to `at` (line ends aside) to the chunk's noise; returns `at`. */
function skip(pos: number, at: number, next: NextByte, scan: ChunkScan): number {
  if (at > pos) scan.noise += at - pos - next.count(CR, pos, at) - next.count(LF, pos, at);
  return at;
}

function onEnq(s: Exclude<FramedState, Committing>, scan: ChunkScan, effects: Effects): FramedState {
  if (scan.answered) return (scan.noise++, s);
  scan.answered = true;
  return establish(s.phase === 'receiving' || s.phase === 'aborted' ? discardOnEnq(s, effects) : s, effects);
}

/** ENQ: ACK when the store can accept, NAK (busy) when it cannot or a message is still held (LIS01-A2 8.2.3). */
function establish(s: Exclude<FramedState, Committing>, effects: Effects): FramedState {
  if (s.phase === 'retrying') {
    effects.push(write(NAK), event({ kind: 'nak', reason: 'busy: the previous message is not committed yet' }));
    return s;
  }
  if (!s.accepting) {
    effects.push(write(NAK), event({ kind: 'nak', reason: 'not accepting (store unavailable)' }));
    return neutral(s);
  }
  effects.push(write(ACK), arm());
  return receiving(s, 0, null, newMessage(Buffer.from([ENQ])), 0, null);
}

function onFrame(s: Receiving | Aborted, r: FrameRead, effects: Effects): FramedState {
  if (r.kind === 'incomplete')
    return s.phase === 'aborted' ? { ...s, partial: r.partial } : receiving(s, s.lastFrameNumber, s.lastText, s.message, s.refusals, r.partial);
  if (r.kind === 'invalid') {
    // LIS01-A2 8.5.1: a defective frame is NAKed; the sender retransmits it.
    if (r.reason === 'checksum') effects.push(event({ kind: 'checksum-error' }));
    return refuse(s, r.reason, effects);
  }
  if (s.phase === 'aborted') return refuse(s, 'sender gave up; waiting for EOT', effects);
  const frame: AcceptedFrame = { frameNumber: r.frameNumber, bytes: r.bytes, text: r.text, final: r.final };
  if (isRetransmission(s, frame)) {
    // LIS01-A2 8.3.4: a repeated frame number means our ACK was lost; ACK it and discard it.
    effects.push(write(ACK), arm());
    return receiving(s, s.lastFrameNumber, s.lastText, s.message, 0, null);
  }
  if (!isNextFrameNumber(s, frame.frameNumber)) return refuse(s, 'frame-number', effects);
  if (s.message.bytes + frame.bytes.length > MAX_MESSAGE_BYTES) {
    effects.push(
      write(NAK),
      event({ kind: 'nak', reason: 'message too large' }),
      event({ kind: 'discarded', reason: `message over ${MAX_MESSAGE_BYTES} bytes` }),
    );
    return aborted(s);
  }
  return accept(s, frame, effects);
}

function accept(s: Receiving, frame: AcceptedFrame, effects: Effects): FramedState {
  const message = withFrame(s.message, frame);
  if (isComplete(message)) {
    effects.push(cancel(), { kind: 'commit', ...assemble(message) });
    return {
      ...common(s),
      phase: 'committing',
      lastFrameNumber: s.lastFrameNumber,
      lastText: s.lastText,
      message: s.message,
      completing: frame,
      inbox: emptyInbox,
    };
  }
  effects.push(write(ACK), arm());
  return receiving(s, frame.frameNumber, frame.text, message, 0, null);
}

/**
 * NAK. The receive timer is not rearmed: it runs from the last accepted frame, so a line that only babbles
 * reaches neutral 30 s after its last good frame. Counting refusals keeps a frame number that comes round
 * again modulo 8 from being taken for the next frame of a message whose frames were lost in between.
 */
function refuse(s: Receiving | Aborted, reason: string, effects: Effects): FramedState {
  effects.push(write(NAK), event({ kind: 'nak', reason }));
  if (s.phase === 'aborted') return aborted(s);
  const refusals = s.refusals + 1;
  if (refusals < MAX_REFUSALS) return receiving(s, s.lastFrameNumber, s.lastText, withRefusal(s.message), refusals, null);
  effects.push(event({ kind: 'discarded', reason: `${MAX_REFUSALS} frames refused in a row` }));
  return aborted(s);
}

/** LIS01-A2 8.4: EOT ends the transfer; an incomplete message is discarded, unless EOT completes it. */
function onEot(s: Receiving | Aborted, effects: Effects): FramedState {
  if (s.phase === 'receiving' && s.message.frames > 0 && s.message.final && s.config.deviations.completeAtEot) {
    effects.push(cancel(), { kind: 'commit', ...assemble(s.message) });
    return {
      ...common(s),
      phase: 'committing',
      lastFrameNumber: s.lastFrameNumber,
      lastText: s.lastText,
      message: s.message,
      completing: null,
      inbox: emptyInbox,
    };
  }
  effects.push(cancel());
  if (s.phase === 'receiving') reportDiscard(s, 'EOT', effects);
  return neutral(s);
}

function discardOnEnq(s: Receiving | Aborted, effects: Effects): Receiving | Aborted {
  if (s.phase === 'receiving' && (s.message.frames > 0 || s.message.refused > 0)) {
    effects.push(cancel());
    reportDiscard(s, 'ENQ', effects);
  }
  return s;
}

/** A transfer that ends without a complete message is reported, also when every frame of it was refused. */
function reportDiscard(s: Receiving, by: string, effects: Effects): void {
  if (s.message.frames > 0) effects.push(event({ kind: 'discarded', reason: `${by} before the L terminator record` }));
  else if (s.message.refused > 0) effects.push(event({ kind: 'discarded', reason: `${by} after ${s.message.refused} refused frame(s), no message complete` }));
}

function timeout(s: FramedState, effects: Effects): FramedState {
  if (s.phase === 'retrying') {
    effects.push(cancel(), { kind: 'commit', ...assemble(s.message) });
    return { ...common(s), phase: 'committing', lastFrameNumber: null, lastText: null, message: s.message, completing: null, inbox: emptyInbox };
  }
  if (s.phase !== 'receiving' && s.phase !== 'aborted') return s;
  effects.push(cancel());
  if (s.phase === 'receiving' && (s.message.frames > 0 || s.message.refused > 0 || s.partial !== null)) {
    effects.push(event({ kind: 'discarded', reason: `receiver timeout (${RECEIVER_TIMEOUT_MS / 1000} s)` }));
  }
  // The open frame goes too: bytes the sender sends next start afresh (an ENQ inside it is no ENQ).
  return neutral(s);
}

function committed(s: Committing, ok: boolean, effects: Effects): FramedState {
  const next = ok ? afterCommit(s, effects) : afterFailedCommit(s, effects);
  if (next.phase === 'retrying') return next;
  let state: Exclude<FramedState, Committing> = next;
  // Each held chunk is taken once; when another message completes, the rest of the queue waits for its outcome in turn.
  for (let taken = takeOldest(s.inbox); taken !== null; taken = takeOldest(taken.rest)) {
    const after = consume(state, taken.chunk, effects, taken.rest);
    if (after.phase === 'committing') return after;
    state = after;
  }
  return state;
}

function afterCommit(s: Committing, effects: Effects): Neutral | Receiving {
  const f = s.completing;
  if (f === null) return neutral(s);
  effects.push(write(ACK), arm());
  return receiving(s, f.frameNumber, f.text, newMessage(), 0, null);
}

function afterFailedCommit(s: Committing, effects: Effects): Receiving | Retrying {
  if (s.completing === null) {
    // EOT completed it and every frame was ACKed: nothing to NAK, so it is held and retried (invariant 2).
    effects.push({ kind: 'arm-timer', ms: HELD_RETRY_MS });
    return { ...common(s), phase: 'retrying', message: s.message } satisfies Retrying;
  }
  // The frame is refused, so the analyzer keeps the message and retransmits this frame (LIS01-A2 8.3.4).
  effects.push(write(NAK), arm(), event({ kind: 'nak', reason: 'commit failed' }));
  return receiving(s, s.lastFrameNumber, s.lastText, s.message, 0, null);
}

/** LIS01-A2 8.3.4: the last frame again (same number; its text too, since a real retransmission repeats it). */
function isRetransmission(s: Receiving, f: AcceptedFrame): boolean {
  return s.lastText !== null && f.frameNumber === s.lastFrameNumber && f.text.equals(s.lastText);
}

/** LIS01-A2 8.3.2: frame numbers start at 1 and count modulo 8. */
function isNextFrameNumber(s: Receiving, fn: number | null): boolean {
  const mode = s.config.deviations.frameNumbers;
  if (s.lastFrameNumber === null || fn === null || mode === 'any') return true;
  if (fn === (s.lastFrameNumber + 1) % 8) return true;
  return mode === 'restart-at-1' && fn === 1;
}

function common(s: FramedState): Pick<Neutral, 'config' | 'accepting'> {
  return { config: s.config, accepting: s.accepting };
}

function receiving(
  s: FramedState,
  lastFrameNumber: number | null,
  lastText: Buffer | null,
  message: MessageSoFar,
  refusals: number,
  partial: PartialFrame | null,
): Receiving {
  return { phase: 'receiving', config: s.config, accepting: s.accepting, lastFrameNumber, lastText, message, partial, refusals };
}

function neutral(s: FramedState): Neutral {
  return { ...common(s), phase: 'neutral' };
}

function aborted(s: Receiving | Aborted): Aborted {
  return { ...common(s), phase: 'aborted', partial: null };
}

function write(byte: number): LinkEffect {
  return { kind: 'write', data: Buffer.from([byte]) };
}

function arm(): LinkEffect {
  return { kind: 'arm-timer', ms: RECEIVER_TIMEOUT_MS };
}

function cancel(): LinkEffect {
  return { kind: 'cancel-timer' };
}

function event(e: LinkEvent): LinkEffect {
  return { kind: 'event', event: e };
}
