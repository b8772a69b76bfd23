// The receiver's side of the LIS01-A2 link layer as a pure state machine: bytes, timer expiries, commit
// outcomes and the store's readiness come in as inputs; writes, timers, commits and events go out as effects.
// Durable before ACK (ARCHITECTURE.md invariant 1): the frame that completes a message (the ETX frame whose
// text ends with the L terminator record) is answered only after the runner reports the commit.
import type { DriverEvent } from '../../src/driver.js';
import { ACK, EOT, ENQ, NAK, STX, decodeFrame } from './frame.js';
import { bareStep } from './link-bare.js';
import type { AstmOptions, LinkDeviations } from './options.js';
import { endsWithTerminator } from './records.js';

/** LIS01-A2 8.5.2: the receiver waits 30 s for a frame or EOT, then discards and returns to neutral. */
export const RECEIVER_TIMEOUT_MS = 30_000;
/** A message larger than this is discarded (a babbling line must not exhaust memory). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** LIS01-A2 8.5.1: after 6 retransmissions the sender aborts; a 7th refusal in a row means it has given up. */
export const MAX_REFUSALS = 7;

/** What the link layer needs from the instrument's options. */
export type LinkConfig = Pick<AstmOptions, 'framing' | 'maxFrameBytes'> & { deviations: LinkDeviations };

/** Events the link layer reports (a subset of the runner's DriverEvents). */
export type LinkEvent = Extract<DriverEvent, { kind: 'nak' | 'checksum-error' | 'discarded' }>;

export type LinkInput =
  | { kind: 'bytes'; data: Buffer }
  | { kind: 'timeout' }
  | { kind: 'committed'; ok: boolean }
  | { kind: 'accepting'; accepting: boolean };

export type LinkEffect =
  | { kind: 'write'; data: Buffer }
  | { kind: 'arm-timer'; ms: number }
  | { kind: 'cancel-timer' }
  /** `raw`: the message's bytes as received (journaled); `text`: the reassembled frame texts. */
  | { kind: 'commit'; raw: Buffer; text: Buffer }
  | { kind: 'event'; event: LinkEvent };

/** The completing frame, held until the commit outcome arrives. */
export interface PendingFrame {
  frameNumber: number;
  text: Buffer;
}

export interface LinkState {
  phase: 'neutral' | 'receiving' | 'committing';
  config: LinkConfig;
  accepting: boolean;
  /** Bytes received and not yet consumed. */
  buf: Buffer;
  /** Last accepted frame number in this transfer; null accepts any first number (decoding a capture). */
  lastFrameNumber: number | null;
  lastText: Buffer | null;
  /** Texts of the accepted frames of the current message. */
  texts: readonly Buffer[];
  /** Bytes consumed since the current message began. */
  raw: readonly Buffer[];
  rawBytes: number;
  pending: PendingFrame | null;
  /** Frames refused in a row; at MAX_REFUSALS the message is discarded and nothing is accepted until EOT/ENQ. */
  refusals: number;
}

export type StepResult = { state: LinkState; effects: LinkEffect[] };

/** The neutral state (LIS01-A2 8.2): waiting for ENQ. */
export function initialLinkState(config: LinkConfig, accepting = true): LinkState {
  const s: LinkState = {
    phase: 'neutral', config, accepting, buf: Buffer.alloc(0), lastFrameNumber: 0, lastText: null,
    texts: [], raw: [], rawBytes: 0, pending: null, refusals: 0,
  };
  return config.framing === 'none' ? { ...s, phase: 'receiving' } : s;
}

/**
 * Runs `input` and every input its effects lead to through step() in a loop: `perform` carries out one effect
 * and returns the input it produced (a commit's outcome), which is queued, never fed by a nested call. So a
 * chunk holding thousands of complete messages keeps the stack flat.
 */
export function drive(state: LinkState, input: LinkInput, perform: (effect: LinkEffect) => LinkInput | void): LinkState {
  let s = state;
  const inputs: LinkInput[] = [input];
  for (let next = inputs.pop(); next !== undefined; next = inputs.shift()) {
    const r = step(s, next);
    s = r.state;
    for (const effect of r.effects) {
      const produced = perform(effect);
      if (produced) inputs.push(produced);
    }
  }
  return s;
}

/** One transition of the receiver. Pure: no I/O, no timers, no clock. */
export function step(state: LinkState, input: LinkInput): StepResult {
  if (input.kind === 'accepting') return { state: { ...state, accepting: input.accepting }, effects: [] };
  if (state.config.framing === 'none') return bareStep(state, input);
  switch (input.kind) {
    case 'bytes':
      return drain({ ...state, buf: state.buf.length ? Buffer.concat([state.buf, input.data]) : input.data }, []);
    case 'timeout':
      if (state.phase !== 'receiving') return { state, effects: [] };
      return { state: neutral(state), effects: discardEffects(state, `receiver timeout (${RECEIVER_TIMEOUT_MS / 1000} s)`) };
    case 'committed':
      return committed(state, input.ok);
  }
}

function committed(state: LinkState, ok: boolean): StepResult {
  const pending = state.pending;
  if (state.phase !== 'committing' || !pending) return { state, effects: [] };
  const effects: LinkEffect[] = [write(ok ? ACK : NAK), { kind: 'arm-timer', ms: RECEIVER_TIMEOUT_MS }];
  const base = { ...state, phase: 'receiving' as const, pending: null };
  if (!ok) {
    // The frame is refused, so the analyzer keeps the message and retransmits this frame (LIS01-A2 8.3.4).
    effects.push(event({ kind: 'nak', reason: 'commit failed' }));
    return drain(base, effects);
  }
  const next = { ...base, lastFrameNumber: pending.frameNumber, lastText: pending.text, texts: [], raw: [], rawBytes: 0 };
  return drain(next, effects);
}

/** Consumes buffered bytes until one is missing or a commit must be awaited. */
function drain(state: LinkState, effects: LinkEffect[]): StepResult {
  let s = state;
  while (s.buf.length > 0 && s.phase !== 'committing') {
    const r = s.phase === 'neutral' ? onNeutral(s, effects) : onReceiving(s, effects);
    if (r === null) break;
    s = r;
  }
  return { state: s, effects };
}

/** LIS01-A2 8.2: in neutral, everything but ENQ is ignored. */
function onNeutral(s: LinkState, effects: LinkEffect[]): LinkState {
  const at = s.buf.indexOf(ENQ);
  if (at < 0) return { ...s, buf: Buffer.alloc(0) };
  return establish({ ...s, buf: s.buf.subarray(at + 1) }, effects);
}

/** ENQ: ACK when the store can accept, NAK (busy) when it cannot (LIS01-A2 8.2.3). */
function establish(s: LinkState, effects: LinkEffect[]): LinkState {
  if (!s.accepting) {
    effects.push(write(NAK), event({ kind: 'nak', reason: 'not accepting (store unavailable)' }));
    return { ...neutral(s), buf: s.buf };
  }
  effects.push(write(ACK), { kind: 'arm-timer', ms: RECEIVER_TIMEOUT_MS });
  const enq = Buffer.from([ENQ]);
  return { ...s, phase: 'receiving', lastFrameNumber: 0, lastText: null, texts: [], raw: [enq], rawBytes: 1, refusals: 0 };
}

function onReceiving(s: LinkState, effects: LinkEffect[]): LinkState | null {
  let at = 0;
  while (at < s.buf.length && s.buf[at] !== STX && s.buf[at] !== EOT && s.buf[at] !== ENQ) at++;
  // Bytes between frames (a stray LF after a CR-only trailer, line noise) are not frames: ignored.
  const t = at > 0 ? consume(s, at) : s;
  const head = t.buf[0];
  if (head === undefined) return t;
  if (head === EOT) {
    // LIS01-A2 8.4: EOT ends the transfer; an incomplete message is discarded.
    if (t.texts.length > 0) effects.push(...discardEffects(t, 'EOT before the L terminator record'));
    else effects.push({ kind: 'cancel-timer' });
    return { ...neutral(t), buf: t.buf.subarray(1) };
  }
  if (head === ENQ) {
    if (t.texts.length > 0) effects.push(...discardEffects(t, 'ENQ before the L terminator record'));
    return establish({ ...neutral(t), buf: t.buf.subarray(1) }, effects);
  }
  return onFrame(t, effects);
}

function onFrame(s: LinkState, effects: LinkEffect[]): LinkState | null {
  const r = decodeFrame(s.buf, 0, s.config.maxFrameBytes, s.config.deviations);
  if (r.kind === 'incomplete') return null;
  const t = consume(s, r.length);
  if (r.kind === 'invalid') {
    // LIS01-A2 8.5.1: a defective frame is NAKed; the sender retransmits it.
    if (r.reason === 'checksum') effects.push(event({ kind: 'checksum-error' }));
    return refuse(t, r.reason, effects);
  }
  if (t.refusals >= MAX_REFUSALS) return refuse(t, 'sender gave up; waiting for EOT', effects);
  if (isRetransmission(t, r.frameNumber, r.text)) {
    // LIS01-A2 8.3.4: a repeated frame number means our ACK was lost; ACK it and discard it.
    effects.push(write(ACK), { kind: 'arm-timer', ms: RECEIVER_TIMEOUT_MS });
    return t;
  }
  if (!isNextFrameNumber(t, r.frameNumber)) return refuse(t, 'frame-number', effects);
  if (t.rawBytes > MAX_MESSAGE_BYTES) {
    effects.push(write(NAK), ...discardEffects(t, `message over ${MAX_MESSAGE_BYTES} bytes`));
    return { ...t, texts: [], raw: [], rawBytes: 0 };
  }
  return accept(t, r.frameNumber, r.text, r.final, effects);
}

function accept(s: LinkState, frameNumber: number, text: Buffer, final: boolean, effects: LinkEffect[]): LinkState {
  const texts = [...s.texts, text];
  const joined = final ? Buffer.concat(texts) : null;
  if (joined && endsWithTerminator(joined)) {
    effects.push({ kind: 'cancel-timer' }, { kind: 'commit', raw: Buffer.concat(s.raw as Buffer[]), text: joined });
    return { ...s, phase: 'committing', pending: { frameNumber, text } };
  }
  effects.push(write(ACK), { kind: 'arm-timer', ms: RECEIVER_TIMEOUT_MS });
  return { ...s, texts, lastFrameNumber: frameNumber, lastText: text, refusals: 0 };
}

/**
 * NAK. Counting refusals keeps a frame number that comes round again modulo 8 from being taken for the
 * next frame of a message whose frames were lost in between.
 */
function refuse(s: LinkState, reason: string, effects: LinkEffect[]): LinkState {
  // LIS01-A2 8.5.2: the receiver's 30 s run from its last reply, NAK included.
  effects.push(write(NAK), { kind: 'arm-timer', ms: RECEIVER_TIMEOUT_MS }, event({ kind: 'nak', reason }));
  const refusals = s.refusals + 1;
  if (refusals !== MAX_REFUSALS || s.texts.length === 0) return { ...s, refusals };
  effects.push(event({ kind: 'discarded', reason: `${MAX_REFUSALS} frames refused in a row` }));
  return { ...s, refusals, texts: [], raw: [], rawBytes: 0 };
}

/** LIS01-A2 8.3.4: the last frame again (same number; its text too, since a real retransmission repeats it). */
function isRetransmission(s: LinkState, fn: number, text: Buffer): boolean {
  return s.lastFrameNumber !== null && s.lastText !== null && fn === s.lastFrameNumber && text.equals(s.lastText);
}

/** LIS01-A2 8.3.2: frame numbers start at 1 and count modulo 8. */
function isNextFrameNumber(s: LinkState, fn: number): boolean {
  const mode = s.config.deviations.frameNumbers;
  if (s.lastFrameNumber === null || mode === 'any') return true;
  if (fn === (s.lastFrameNumber + 1) % 8) return true;
  return mode === 'restart-at-1' && fn === 1;
}

function consume(s: LinkState, n: number): LinkState {
  const used = s.buf.subarray(0, n);
  return { ...s, buf: s.buf.subarray(n), raw: [...s.raw, used], rawBytes: s.rawBytes + n };
}

function neutral(s: LinkState): LinkState {
  return { ...s, phase: 'neutral', lastFrameNumber: 0, lastText: null, texts: [], raw: [], rawBytes: 0, pending: null, refusals: 0 };
}

function discardEffects(s: LinkState, reason: string): LinkEffect[] {
  const effects: LinkEffect[] = [{ kind: 'cancel-timer' }];
  if (s.texts.length > 0 || s.rawBytes > 1) effects.push(event({ kind: 'discarded', reason }));
  return effects;
}

function write(byte: number): LinkEffect {
  return { kind: 'write', data: Buffer.from([byte]) };
}

function event(e: LinkEvent): LinkEffect {
  return { kind: 'event', event: e };
}
