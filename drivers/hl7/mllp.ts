// MLLP framing: <VT> message <FS><CR> (HL7 v2 Transport Specification: MLLP, Release 1, section 2).
// A pure step: a chunk may hold part of a block, one block or several. Bytes outside a block are
// noise and skipped; a block past the size cap is dropped as it arrives, so memory stays bounded.

export const VT = 0x0b;
export const FS = 0x1c;
export const CR = 0x0d;

/** How much of a refused block is kept so its MSH can still be read for the refusal. */
const HEAD_BYTES = 1024;

export type MllpState =
  { phase: 'idle'; afterBlock: boolean } | { phase: 'block'; chunks: Buffer[]; length: number } | { phase: 'oversize'; head: Buffer; length: number };

export type MllpEffect =
  | { kind: 'message'; raw: Buffer }
  | { kind: 'oversize'; head: Buffer; length: number }
  | { kind: 'noise'; count: number }
  | { kind: 'truncated'; length: number };

/** The state before any byte. */
export const initialMllpState: MllpState = { phase: 'idle', afterBlock: false };

/** Feeds one chunk (the given state is consumed); returns the next state and what completed. `maxBytes` caps one message. */
export function mllpStep(state: MllpState, chunk: Buffer, maxBytes: number): { state: MllpState; effects: MllpEffect[] } {
  const effects: MllpEffect[] = [];
  let s = state;
  let pos = 0;
  while (pos < chunk.length) {
    if (s.phase === 'idle') {
      const start = chunk.indexOf(VT, pos);
      const skipped = (start < 0 ? chunk.length : start) - pos;
      // The CR of <FS><CR> (possibly in the next chunk) is the block's trailer, not noise.
      const trailer = s.afterBlock && skipped > 0 && chunk[pos] === CR ? 1 : 0;
      if (skipped - trailer > 0) effects.push({ kind: 'noise', count: skipped - trailer });
      if (start < 0) {
        if (skipped > 0) s = { phase: 'idle', afterBlock: false };
        break;
      }
      s = { phase: 'block', chunks: [], length: 0 };
      pos = start + 1;
      continue;
    }
    const next = nextDelimiter(chunk, pos);
    const end = next < 0 ? chunk.length : next;
    s = append(s, chunk.subarray(pos, end), maxBytes);
    if (next < 0) break;
    effects.push(finish(s, chunk[next] === FS));
    // A VT inside a block starts the next block: the one before it was cut short.
    s = chunk[next] === FS ? { phase: 'idle', afterBlock: true } : { phase: 'block', chunks: [], length: 0 };
    pos = next + 1;
  }
  return { state: s, effects };
}

function nextDelimiter(chunk: Buffer, from: number): number {
  for (let i = from; i < chunk.length; i += 1) {
    const b = chunk[i];
    if (b === FS || b === VT) return i;
  }
  return -1;
}

function append(s: Exclude<MllpState, { phase: 'idle' }>, piece: Buffer, maxBytes: number): MllpState {
  if (piece.length === 0) return s;
  const length = s.length + piece.length;
  if (s.phase === 'oversize') {
    const room = HEAD_BYTES - s.head.length;
    const head = room > 0 ? Buffer.concat([s.head, piece.subarray(0, room)]) : s.head;
    return { phase: 'oversize', head, length };
  }
  // The chunk list is extended in place (a state is consumed by the step that receives it), which
  // keeps byte-at-a-time input linear; `piece` is copied because the caller may reuse its buffer.
  const chunks = s.chunks;
  chunks.push(Buffer.from(piece));
  if (length <= maxBytes) return { phase: 'block', chunks, length };
  return { phase: 'oversize', head: Buffer.concat(chunks).subarray(0, HEAD_BYTES), length };
}

function finish(s: MllpState, ended: boolean): MllpEffect {
  if (s.phase === 'oversize') return { kind: 'oversize', head: s.head, length: s.length };
  const length = s.phase === 'block' ? s.length : 0;
  if (!ended) return { kind: 'truncated', length };
  // <VT><FS> with nothing between is a keep-alive some senders use, not a message.
  if (s.phase !== 'block' || length === 0) return { kind: 'noise', count: 2 };
  return { kind: 'message', raw: Buffer.concat(s.chunks, s.length) };
}
