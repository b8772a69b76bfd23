// One ASTM line, both ways: the receiver (link.ts) and the sender (sender.ts) over one cable, as a pure machine.
// LIS01-A2 8.1: the line is neutral, or one side holds it. The analyzer's bytes are replies to the sender while the
// sender holds the line, and go to the receiver otherwise; the sender bids only while the receiver is neutral, and
// yields when the analyzer bids too (8.2.7), so a waiting answer never delays the analyzer's results.
import { driveMachine } from './drive.js';
import type { LinkEffect, LinkInput, LinkState } from './link.js';
import { step as receiverStep } from './link.js';
import { holdsLine, senderStep, type Outgoing, type SenderEffect, type SenderInput, type SenderState } from './sender.js';

/** The two timers of a line: the receiver's 30 s and the sender's replies and waits. */
export type LineTimer = 'receiver' | 'sender';

export interface LineState {
  readonly receiver: LinkState;
  readonly sender: SenderState;
}

export type LineInput =
  | { kind: 'bytes'; data: Buffer }
  | { kind: 'timeout'; timer: LineTimer }
  | { kind: 'committed'; ok: boolean }
  | { kind: 'accepting'; accepting: boolean }
  | { kind: 'send'; message: Outgoing }
  | { kind: 'cancel'; id: string; reason: string };

export type LineEffect =
  | Exclude<LinkEffect, { kind: 'arm-timer' | 'cancel-timer' }>
  | Exclude<SenderEffect, { kind: 'arm-timer' | 'cancel-timer' }>
  | { kind: 'arm-timer'; timer: LineTimer; ms: number }
  | { kind: 'cancel-timer'; timer: LineTimer };

export type LineStep = { state: LineState; effects: LineEffect[] };

/** One transition of the line. Pure. */
export function lineStep(state: LineState, input: LineInput): LineStep {
  const effects: LineEffect[] = [];
  let s = state;
  switch (input.kind) {
    case 'bytes':
      s = onBytes(s, input.data, effects);
      break;
    case 'timeout':
      s = input.timer === 'sender' ? toSender(s, { kind: 'timeout' }, effects) : toReceiver(s, { kind: 'timeout' }, effects);
      break;
    case 'committed':
    case 'accepting':
      s = toReceiver(s, input, effects);
      break;
    case 'send':
    case 'cancel':
      s = toSender(s, input, effects);
      break;
  }
  return { state: afterStep(state, s, effects), effects };
}

/** Runs `input` and every input its effects produce (a commit's outcome) through lineStep in a loop (drive.ts). */
export function driveLine(state: LineState, input: LineInput, perform: (effect: LineEffect, after: LineState) => LineInput | void): LineState {
  return driveMachine(lineStep, state, input, perform);
}

/** True when neither side holds the line. */
export function isNeutral(s: LineState): boolean {
  return s.receiver.phase === 'neutral' && !holdsLine(s.sender);
}

function onBytes(state: LineState, data: Buffer, effects: LineEffect[]): LineState {
  let s = state;
  let pos = 0;
  // A reply is one character (LIS01-A2 8.3.4); what follows the sender's last reply belongs to the receiver.
  while (pos < data.length && holdsLine(s.sender)) s = toSender(s, { kind: 'reply', byte: data[pos++]! }, effects);
  return pos < data.length ? toReceiver(s, { kind: 'bytes', data: pos === 0 ? data : data.subarray(pos) }, effects) : s;
}

function toReceiver(s: LineState, input: LinkInput, effects: LineEffect[]): LineState {
  const r = receiverStep(s.receiver, input);
  for (const e of r.effects) effects.push(e.kind === 'arm-timer' || e.kind === 'cancel-timer' ? { ...e, timer: 'receiver' } : e);
  return { receiver: r.state, sender: s.sender };
}

function toSender(s: LineState, input: SenderInput, effects: LineEffect[]): LineState {
  const r = senderStep(s.sender, input);
  for (const e of r.effects) effects.push(e.kind === 'arm-timer' || e.kind === 'cancel-timer' ? { ...e, timer: 'sender' } : e);
  return { receiver: s.receiver, sender: r.state };
}

/** The instrument's transfer just ended: a contention wait is over. The line is neutral: the sender may bid. */
function afterStep(before: LineState, after: LineState, effects: LineEffect[]): LineState {
  let s = after;
  if (after.receiver.phase !== 'neutral') return s;
  if (before.receiver.phase !== 'neutral') s = toSender(s, { kind: 'line-free' }, effects);
  return toSender(s, { kind: 'bid' }, effects);
}
