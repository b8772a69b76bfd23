// Wire material for the ASTM fuzz suites: the six documented dialects, random messages framed at random sizes,
// and the mutations a line inflicts (a flipped checksum, a byte replaced, inserted or deleted, noise).
import fc from 'fast-check';
import { encodeFrame } from '../../drivers/astm/frame.js';
import { frameTexts } from '../../drivers/astm/emulator.js';
import { dialects } from '../astm/fixtures/dialects.js';
import { bytes } from '../astm/mnemonics.js';

/** The documented dialects' sessions as bytes. */
export const dialectWires: Buffer[] = dialects.map((d) => bytes(d.wire));

/** One LIS2-A2 message's text: H, then a P, O and R per result, then L. */
export const messageText = fc
  .array(
    fc.record({
      accession: fc.stringMatching(/^[A-Z0-9]{1,8}$/),
      code: fc.constantFrom('GLU', 'NA', 'K'),
      value: fc.stringMatching(/^[0-9.<>A-Za-z ]{0,12}$/),
    }),
    { minLength: 1, maxLength: 5 },
  )
  .map(
    (rs) =>
      ['H|\\^&|||Fuzz^1', ...rs.flatMap((r, i) => [`P|${i + 1}`, `O|1|${r.accession}`, `R|1|^^^${r.code}|${r.value}|||||F||||20260101120000`]), 'L|1|N'].join(
        '\r',
      ) + '\r',
  );

/** A session (ENQ, the messages' frames at `size`, EOT) with frame numbers continuing across messages. */
export function session(texts: readonly string[], size: number): Buffer {
  const frames: Buffer[] = [];
  for (const text of texts) {
    const pieces = frameTexts(Buffer.from(text, 'latin1'), size, 'message');
    pieces.forEach((t, i) => frames.push(encodeFrame(frames.length + 1, t, i === pieces.length - 1)));
  }
  return Buffer.concat([Buffer.from([0x05]), ...frames, Buffer.from([0x04])]);
}

export const sessionArb = fc
  .tuple(fc.array(messageText, { minLength: 1, maxLength: 3 }), fc.integer({ min: 16, max: 300 }))
  .map(([texts, size]) => session(texts, size));

/** A byte edit: replace, insert or delete at a position (taken modulo the length). */
const edit = fc.record({ how: fc.constantFrom('replace', 'insert', 'delete'), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) });

/** `wire` with the edits applied. */
export function mutate(wire: Buffer, edits: readonly { how: string; at: number; byte: number }[]): Buffer {
  const out = [...wire];
  for (const e of edits) {
    const at = e.at % (out.length + 1);
    if (e.how === 'insert') out.splice(at, 0, e.byte);
    else if (out.length > 0 && e.how === 'delete') out.splice(at % out.length, 1);
    else if (out.length > 0) out[at % out.length] = e.byte;
  }
  return Buffer.from(out);
}

/** Wire bytes as a line might deliver them: sessions (dialects or random), mutated or not, and noise. */
export const wireArb = fc.oneof(
  fc.constantFrom(...dialectWires),
  sessionArb,
  fc.tuple(fc.oneof(fc.constantFrom(...dialectWires), sessionArb), fc.array(edit, { minLength: 1, maxLength: 6 })).map(([w, e]) => mutate(w, e)),
  fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  fc.constantFrom(...[0x02, 0x03, 0x04, 0x05, 0x0d, 0x0a, 0x17].map((b) => Buffer.from([b]))),
);

/** Cuts `data` into chunks at the given sizes (cycled), as a UART or a socket delivers it. */
export function chunked(data: Buffer, sizes: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < data.length; i++) {
    const n = sizes.length ? Math.max(1, sizes[i % sizes.length]!) : data.length;
    out.push(data.subarray(at, at + n));
    at += n;
  }
  return out;
}
