// A frame read across chunks as a serial line delivers it. While a frame is open each new byte is scanned once
// and held once; the frame is decoded when its terminator is in view (and at most four times more while its
// checksum and trailer trickle in), so a 64,000-byte frame arriving a byte at a time costs what one chunk does.
import { append, items, type Chain } from './chain.js';
import { decodeFrame, endsText, MAX_TAIL, type FrameInvalidReason, type FrameResult } from './frame.js';
import type { LinkDeviations } from './options.js';

/**
 * A frame whose STX has arrived and whose end has not. Its pieces are views into the chunks they came in (a
 * transport hands each chunk over for good): only the first and last of them can be part of a larger chunk.
 */
export interface PartialFrame {
  /** Its bytes so far, from the STX. */
  readonly chunks: Chain<Buffer>;
  readonly length: number;
  /** Its ETX or ETB has arrived; only the checksum and trailer are missing. */
  readonly ended: boolean;
}

/** A frame read to its end (`bytes` as received, `text` a view into them), refused, or still open. */
export type FrameRead =
  | { kind: 'frame'; frameNumber: number | null; bytes: Buffer; text: Buffer; final: boolean; used: number }
  | { kind: 'invalid'; reason: FrameInvalidReason; used: number }
  | { kind: 'incomplete'; partial: PartialFrame };

/**
 * Reads the frame that starts at `data[at]` (an STX) or, with `partial`, continues there. `used` is how many
 * bytes of `data` from `at` the frame took. A frame is never held beyond `maxFrameBytes`.
 */
export function readFrame(data: Buffer, at: number, partial: PartialFrame | null, maxFrameBytes: number, dev: LinkDeviations): FrameRead {
  if (partial === null) {
    const r = decodeFrame(data, at, maxFrameBytes, dev);
    if (r.kind !== 'incomplete') return settled(r, data, at, 0);
    return { kind: 'incomplete', partial: { chunks: append(null, data.subarray(at)), length: data.length - at, ended: r.ended } };
  }
  let end = at;
  if (!partial.ended) {
    // The open text may take `room` more bytes; a byte past that which does not end it makes the frame too long.
    const limit = Math.min(data.length, at + maxFrameBytes - partial.length);
    while (end < limit && endsText[data[end]!] === 0) end++;
    if (end === data.length) {
      return { kind: 'incomplete', partial: { chunks: append(partial.chunks, data.subarray(at)), length: partial.length + data.length - at, ended: false } };
    }
    if (endsText[data[end]!] === 0) return { kind: 'invalid', reason: 'frame-too-long', used: end - at + 1 };
  }
  // The terminator is in view: the frame ends within MAX_TAIL bytes after it.
  const joined = Buffer.concat([...items(partial.chunks), data.subarray(at, Math.min(data.length, end + 1 + MAX_TAIL))]);
  const r = decodeFrame(joined, 0, maxFrameBytes, dev);
  if (r.kind === 'incomplete') return { kind: 'incomplete', partial: { chunks: append(null, joined), length: joined.length, ended: true } };
  return settled(r, joined, 0, partial.length);
}

/** Bytes held by an open frame. */
export function partialBytes(partial: PartialFrame | null): number {
  return partial?.length ?? 0;
}

/** A decoded frame; it starts at `src[start]`, and `before` of its bytes came in earlier chunks. */
function settled(r: Exclude<FrameResult, { kind: 'incomplete' }>, src: Buffer, start: number, before: number): FrameRead {
  const used = r.length - before;
  if (r.kind === 'invalid') return { kind: 'invalid', reason: r.reason, used };
  return { kind: 'frame', frameNumber: r.frameNumber, bytes: src.subarray(start, start + r.length), text: r.text, final: r.final, used };
}
