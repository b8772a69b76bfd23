// `framing: none`: analyzers that send bare LIS2-A2 records (H ... L) with no ENQ, frames or checksums.
// There is nothing to acknowledge, so durability means retrying the commit until it succeeds; the
// message stays in memory meanwhile (the analyzer will not resend it). Each byte is scanned once; a message
// is held up to MAX_MESSAGE_BYTES, and what arrives while its commit waits up to as much again.
import { append, items, type Chain } from './chain.js';
import { CR, LF } from './frame.js';
import { emptyInbox, hold, holdFirst, MAX_MESSAGE_BYTES, takeOldest, withoutDropped, type Inbox } from './inbox.js';
import type { LinkCommon, LinkConfig, LinkEffect, LinkInput, Step } from './link-contract.js';
import { isTerminatorRecord } from './records.js';

/** Idle time after which a message without an L record is committed as received. */
export const BARE_IDLE_MS = 30_000;
/** Delay before retrying a failed commit of a bare message. */
export const BARE_RETRY_MS = 5_000;

/** The record being received. */
interface LineSoFar {
  /** Its bytes so far, views into the chunks they came in (none kept while skipping). */
  readonly chunks: Chain<Buffer>;
  readonly bytes: number;
  /** Its first two bytes after leading blanks: an L record is `L` alone or `L` and the field delimiter. */
  readonly head: readonly number[];
  /** It began with blanks (so it declares no delimiters). */
  readonly indented: boolean;
  /** It holds a byte other than a space. */
  readonly content: boolean;
}

/** Collecting the records of a message. */
export interface BareReceiving extends LinkCommon {
  readonly phase: 'receiving';
  readonly lines: Chain<Buffer>;
  readonly bytes: number;
  /** The field delimiter declared by the message's H record (`|` until one is read). */
  readonly delimiter: string;
  readonly line: LineSoFar;
}

/** A message outgrew MAX_MESSAGE_BYTES and was discarded: its records are skipped up to its L record. */
export interface BareSkipping extends LinkCommon {
  readonly phase: 'skipping';
  readonly delimiter: string;
  readonly line: LineSoFar;
}

interface Held extends LinkCommon {
  readonly message: Buffer;
  /** What arrived meanwhile, read once the message is committed. */
  readonly inbox: Inbox;
}

/** A complete message whose commit is outstanding. */
export interface BareCommitting extends Held {
  readonly phase: 'committing';
}

/** A message whose commit failed, retried every BARE_RETRY_MS. */
export interface BareRetrying extends Held {
  readonly phase: 'retrying';
}

/** The `framing: none` receiver's states. */
export type BareState = BareReceiving | BareSkipping | BareCommitting | BareRetrying;

type Effects = LinkEffect[];
const noLine: LineSoFar = { chunks: null, bytes: 0, head: [], indented: false, content: false };

/** Collecting, nothing received yet. */
export function initialBareState(config: LinkConfig, accepting: boolean): BareReceiving {
  return { phase: 'receiving', config, accepting, lines: null, bytes: 0, delimiter: '|', line: noLine };
}

/** Bytes a bare receiver holds in memory. */
export function bareHeldBytes(s: BareState): number {
  if (s.phase === 'receiving') return s.bytes + s.line.bytes;
  return s.phase === 'skipping' ? 0 : s.message.length + s.inbox.bytes;
}

/** The `framing: none` transitions of the link state machine. */
export function bareStep(s: BareState, input: Exclude<LinkInput, { kind: 'accepting' }>): Step<BareState> {
  const effects: Effects = [];
  switch (input.kind) {
    case 'bytes':
      if (s.phase === 'committing' || s.phase === 'retrying') return { state: { ...s, inbox: hold(s.inbox, input.data) }, effects };
      return { state: armIdle(scan(s, input.data, effects), effects), effects };
    case 'timeout':
      return { state: timeout(s, effects), effects };
    case 'committed':
      if (s.phase !== 'committing') return { state: s, effects };
      if (!input.ok) {
        effects.push({ kind: 'arm-timer', ms: BARE_RETRY_MS });
        return { state: { ...s, phase: 'retrying' } satisfies BareRetrying, effects };
      }
      return { state: resume(s, effects), effects };
  }
}

function timeout(s: BareState, effects: Effects): BareState {
  if (s.phase === 'skipping') return initialBareState(s.config, s.accepting);
  if (s.phase === 'retrying') return commit(s, s.message, s.inbox, effects);
  if (s.phase !== 'receiving' || (s.bytes === 0 && !s.line.content)) return s;
  // 30 s of silence: the message is complete as received (there is no retransmission to wait for).
  return commit(s, Buffer.concat([...items(s.lines), ...items(s.line.chunks)]), emptyInbox, effects);
}

/** Reads what arrived while the committed message waited, each held chunk once, until another message completes. */
function resume(s: BareCommitting, effects: Effects): BareState {
  if (s.inbox.dropped > 0) effects.push({ kind: 'event', event: { kind: 'discarded', reason: `${s.inbox.dropped} bytes dropped while a commit waited` } });
  let state: BareReceiving | BareSkipping = initialBareState(s.config, s.accepting);
  for (let taken = takeOldest(withoutDropped(s.inbox)); taken !== null; taken = takeOldest(taken.rest)) {
    const next = scan(state, taken.chunk, effects, taken.rest);
    if (next.phase === 'committing' || next.phase === 'retrying') return next;
    state = next;
  }
  return armIdle(state, effects);
}

/** Moves complete lines into the message until an L record completes it (the chunk's rest then waits, before `after`); each byte is looked at once. */
function scan(state: BareReceiving | BareSkipping, data: Buffer, effects: Effects, after: Inbox = emptyInbox): BareState {
  let s: BareReceiving | BareSkipping = state;
  let pos = 0;
  // The next CR and LF, each searched again only once passed: one pass over the chunk whatever its lines.
  let nextCr = -1;
  let nextLf = -1;
  while (pos < data.length) {
    if (nextCr < pos) nextCr = indexOrEnd(data, CR, pos);
    if (nextLf < pos) nextLf = indexOrEnd(data, LF, pos);
    let end = Math.min(nextCr, nextLf);
    // A lone CR ends the line at once: an LF that follows later is a blank line, dropped.
    const complete = end < data.length;
    if (complete) end += data[end] === CR && data[end + 1] === LF ? 2 : 1;
    s = extend(s, data.subarray(pos, end), effects);
    pos = end;
    if (!complete) break;
    const next = lineDone(s, effects);
    if (next.phase === 'committing' || next.phase === 'retrying') return { ...next, inbox: holdFirst(after, data.subarray(pos)) };
    s = next;
  }
  return s;
}

/** A message begun (or being skipped) ends after BARE_IDLE_MS of silence: armed once per input, not once per chunk read. */
function armIdle(s: BareState, effects: Effects): BareState {
  if (s.phase === 'skipping' || (s.phase === 'receiving' && (s.bytes > 0 || s.line.content))) effects.push({ kind: 'arm-timer', ms: BARE_IDLE_MS });
  return s;
}

/** The line with `piece` appended; a message that would outgrow its cap is discarded. */
function extend(s: BareReceiving | BareSkipping, piece: Buffer, effects: Effects): BareReceiving | BareSkipping {
  const line = withBytes(s.line, piece, s.phase === 'receiving');
  if (s.phase === 'skipping') return { ...s, line };
  if (s.bytes + line.bytes <= MAX_MESSAGE_BYTES) return { ...s, line };
  effects.push({ kind: 'event', event: { kind: 'discarded', reason: `message over ${MAX_MESSAGE_BYTES} bytes` } });
  return { phase: 'skipping', config: s.config, accepting: s.accepting, delimiter: s.delimiter, line: { ...line, chunks: null, bytes: 0 } };
}

function lineDone(s: BareReceiving | BareSkipping, effects: Effects): BareState {
  const { line } = s;
  const fresh = { ...s, line: noLine };
  if (s.phase === 'skipping') return isTerminator(line, s.delimiter) ? initialBareState(s.config, s.accepting) : fresh;
  if (s.bytes === 0 && !line.content) return fresh;
  const delimiter = s.bytes === 0 && line.head[0] === 0x48 && line.head.length > 1 && !line.indented ? String.fromCharCode(line.head[1]!) : s.delimiter;
  const lines = items(line.chunks).reduce<Chain<Buffer>>(append, s.lines);
  const next: BareReceiving = { ...s, lines, bytes: s.bytes + line.bytes, delimiter, line: noLine };
  if (!isTerminator(line, delimiter)) return next;
  return commit(next, Buffer.concat(items(lines), next.bytes), emptyInbox, effects);
}

function commit(s: BareState, message: Buffer, inbox: Inbox, effects: Effects): BareCommitting {
  effects.push({ kind: 'cancel-timer' }, { kind: 'commit', raw: message, text: message });
  return { phase: 'committing', config: s.config, accepting: s.accepting, message, inbox };
}

/** The line with more of its bytes: what its start says is read from the first of them. */
function withBytes(line: LineSoFar, piece: Buffer, keep: boolean): LineSoFar {
  let { head, indented, content } = line;
  for (let i = 0; i < piece.length && (head.length < 2 || !content); i++) {
    const byte = piece[i]!;
    if (byte === CR || byte === LF) break;
    if (byte !== 0x20) content = true;
    if (head.length === 0 && (byte === 0x20 || byte === 0x09)) indented = true;
    else if (head.length < 2) head = [...head, byte];
  }
  const chunks = keep ? append(line.chunks, piece) : null;
  return { chunks, bytes: keep ? line.bytes + piece.length : 0, head, indented, content };
}

function indexOrEnd(data: Buffer, byte: number, from: number): number {
  const at = data.indexOf(byte, from);
  return at < 0 ? data.length : at;
}

function isTerminator(line: LineSoFar, delimiter: string): boolean {
  return isTerminatorRecord(Uint8Array.from(line.head), delimiter);
}
