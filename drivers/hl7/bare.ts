// Bare HL7 framing (`framing: none`): segments with no MLLP block around them, as some analyzers write them to a serial
// port and as captures are often saved. A message starts at a segment that begins with MSH (2.5.2: segments end in CR;
// LF is accepted too) and ends where the next one starts, or when the line falls silent (`bareFlush`). Pure: the runner
// and `labgate decode` split alike. Each chunk is searched once (with the few bytes before it), and a message's chunks
// are joined once, when it completes: time stays linear however small the chunks. Memory stays bounded: a message past
// the cap is refused and dropped as it arrives.

/** The state between chunks: the message under way (its chunks), or a refusal under way and the bytes it dropped. */
export interface BareState {
  chunks: Buffer[];
  length: number;
  /** The last bytes seen, so an `<CR>MSH` split across chunks is still found. */
  tail: Buffer;
  /** A message past the cap: its bytes are dropped up to the next MSH. */
  dropping: { head: Buffer; length: number } | undefined;
}

export type BareEffect = { kind: 'message'; raw: Buffer } | { kind: 'oversize'; head: Buffer; length: number };

/** The state before any byte. */
export const initialBareState: BareState = { chunks: [], length: 0, tail: Buffer.alloc(0), dropping: undefined };

const HEAD_BYTES = 1024;
const MSH = Buffer.from('MSH', 'latin1');

/** Feeds one chunk (the given state is consumed); every message that the start of a later one completed comes out. `maxBytes` caps one message. */
export function bareStep(state: BareState, chunk: Buffer, maxBytes: number): { state: BareState; effects: BareEffect[] } {
  const effects: BareEffect[] = [];
  const before = state.dropping ? state.dropping.length : state.length;
  const window = Buffer.concat([state.tail, chunk]);
  // Offsets of new messages' starts, counted from the start of the message under way (its own MSH at 0 is none).
  const starts = segmentStarts(window)
    .map((at) => before - state.tail.length + at)
    .filter((at) => at > 0);
  const tail = Buffer.from(window.subarray(Math.max(0, window.length - 3)));
  if (starts.length === 0) return { state: grown(state, chunk, tail, maxBytes), effects };
  const whole = state.dropping ? undefined : Buffer.concat([...state.chunks, chunk]);
  let from = 0;
  for (const at of starts) {
    if (from === 0 && state.dropping) effects.push({ kind: 'oversize', head: state.dropping.head, length: at });
    else if (at - from > maxBytes)
      effects.push({ kind: 'oversize', head: Buffer.from(piece(whole, state, chunk, from, from + HEAD_BYTES)), length: at - from });
    else effects.push({ kind: 'message', raw: Buffer.from(piece(whole, state, chunk, from, at)) });
    from = at;
  }
  const rest = Buffer.from(piece(whole, state, chunk, from, before + chunk.length));
  return { state: grown(initialBareState, rest, tail, maxBytes), effects };
}

// The bytes [from, to) of the message under way; after a dropped message only the new chunk's bytes remain.
function piece(whole: Buffer | undefined, state: BareState, chunk: Buffer, from: number, to: number): Buffer {
  if (whole !== undefined) return whole.subarray(from, to);
  const offset = state.dropping!.length;
  return chunk.subarray(Math.max(0, from - offset), to - offset);
}

// Adds bytes to the message under way, or to the refusal under way; a message that passes the cap starts one.
function grown(state: BareState, bytes: Buffer, tail: Buffer, maxBytes: number): BareState {
  if (state.dropping) return { ...initialBareState, tail, dropping: { head: state.dropping.head, length: state.dropping.length + bytes.length } };
  const length = state.length + bytes.length;
  if (length <= maxBytes) {
    // The chunk list is the consumed state's own (as in mllp.ts): copying it at every chunk would cost its length each
    // time. An empty list is never extended in place, so the initial state stays empty.
    const chunks = state.chunks.length === 0 ? [] : state.chunks;
    if (bytes.length > 0) chunks.push(bytes);
    return { chunks, length, tail, dropping: undefined };
  }
  const head = Buffer.concat([...state.chunks, bytes]).subarray(0, HEAD_BYTES);
  return { ...initialBareState, tail, dropping: { head: Buffer.from(head), length } };
}

/** The line fell silent (or the capture ended): what is pending is a message. */
export function bareFlush(state: BareState): { state: BareState; effects: BareEffect[] } {
  const effects: BareEffect[] = [];
  const raw = Buffer.concat(state.chunks);
  if (state.dropping) effects.push({ kind: 'oversize', ...state.dropping });
  else if (raw.toString('latin1').trim() !== '') effects.push({ kind: 'message', raw });
  return { state: initialBareState, effects };
}

/** True when nothing is pending (no idle timer is needed). */
export function bareIdle(state: BareState): boolean {
  return state.length === 0 && state.dropping === undefined;
}

// Offsets of every `MSH` in `buf` that begins a segment (after CR or LF).
function segmentStarts(buf: Buffer): number[] {
  const out: number[] = [];
  for (let at = buf.indexOf(MSH, 1); at >= 0; at = buf.indexOf(MSH, at + 1)) {
    const before = buf[at - 1];
    if (before === 0x0d || before === 0x0a) out.push(at);
  }
  return out;
}
