// `framing: none`: analyzers that send bare LIS2-A2 records (H ... L) with no ENQ, frames or checksums.
// There is nothing to acknowledge, so durability means retrying the commit until it succeeds; the
// message stays in memory meanwhile (the analyzer will not resend it).
import type { LinkEffect, LinkInput, LinkState, StepResult } from './link.js';
import { CR, LF } from './frame.js';
import { isTerminatorRecord } from './records.js';

/** Idle time after which a message without an L record is committed as received. */
export const BARE_IDLE_MS = 30_000;
/** Delay before retrying a failed commit of a bare message. */
export const BARE_RETRY_MS = 5_000;

/** The `framing: none` transitions of the link state machine. */
export function bareStep(state: LinkState, input: Exclude<LinkInput, { kind: 'accepting' }>): StepResult {
  switch (input.kind) {
    case 'bytes': {
      const s = { ...state, buf: Buffer.concat([state.buf, input.data]) };
      return s.phase === 'committing' ? { state: s, effects: [] } : scan(s, []);
    }
    case 'timeout':
      if (state.phase === 'committing') return state.pending ? { state, effects: [] } : commit(state, state.texts[0]!, []);
      if (state.rawBytes === 0 && !hasContent(state.buf)) return { state, effects: [] };
      return commit(consumeAll(state), messageOf(consumeAll(state)), []);
    case 'committed': {
      if (state.phase !== 'committing' || !state.pending) return { state, effects: [] };
      if (!input.ok) return { state: { ...state, pending: null }, effects: [{ kind: 'arm-timer', ms: BARE_RETRY_MS }] };
      const next: LinkState = { ...state, phase: 'receiving', pending: null, texts: [], raw: [], rawBytes: 0 };
      return scan(next, []);
    }
  }
}

/** Moves complete lines into the message until an L record completes it. */
function scan(state: LinkState, effects: LinkEffect[]): StepResult {
  let s = state;
  for (;;) {
    const end = lineEnd(s.buf);
    if (end < 0) break;
    const line = s.buf.subarray(0, end);
    s = consumeLine(s, end);
    if (isTerminatorRecord(trimLine(line), delimiterOf(s))) {
      return commit(s, messageOf(s), effects);
    }
  }
  if (s.rawBytes > 0 || hasContent(s.buf)) effects.push({ kind: 'arm-timer', ms: BARE_IDLE_MS });
  return { state: s, effects };
}

function commit(s: LinkState, message: Buffer, effects: LinkEffect[]): StepResult {
  effects.push({ kind: 'cancel-timer' }, { kind: 'commit', raw: message, text: message });
  return { state: { ...s, phase: 'committing', texts: [message], pending: { frameNumber: 0, text: message } }, effects };
}

/** Index just past the line's CR, CR LF or LF; -1 when the line is not complete. */
function lineEnd(buf: Buffer): number {
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === LF) return i + 1;
    // A lone CR ends the line at once: an LF that follows later is a blank line, dropped.
    if (buf[i] === CR) return buf[i + 1] === LF ? i + 2 : i + 1;
  }
  return -1;
}

function consumeLine(s: LinkState, n: number): LinkState {
  if (s.rawBytes === 0 && !hasContent(s.buf.subarray(0, n))) return { ...s, buf: s.buf.subarray(n) };
  return { ...s, buf: s.buf.subarray(n), raw: [...s.raw, s.buf.subarray(0, n)], rawBytes: s.rawBytes + n };
}

function consumeAll(s: LinkState): LinkState {
  return s.buf.length ? consumeLine(s, s.buf.length) : s;
}

function messageOf(s: LinkState): Buffer {
  return Buffer.concat(s.raw as Buffer[]);
}

/** The record without leading blanks and its line end. */
function trimLine(line: Buffer): Buffer {
  let start = 0;
  let end = line.length;
  while (start < end && (line[start] === 0x20 || line[start] === 0x09)) start++;
  while (end > start && (line[end - 1] === CR || line[end - 1] === LF)) end--;
  return line.subarray(start, end);
}

/** The field delimiter of the message's H record, if it has one. */
function delimiterOf(s: LinkState): string {
  const first = s.raw[0];
  return first && first[0] === 0x48 && first.length > 1 ? String.fromCharCode(first[1]!) : '|';
}

function hasContent(buf: Buffer): boolean {
  return buf.some((b) => b !== CR && b !== LF && b !== 0x20);
}
