// LIS01-A2 frame codec on raw bytes: <STX> FN text <ETB|ETX> C1 C2 <CR><LF>.
// The checksum is computed and checked on the raw bytes of every frame, ETB frames included, before any
// text decoding (LIS01-A2 8.3.3), so analyzers sending non-ASCII text are verified byte for byte.
import type { LinkDeviations } from './options.js';

/** Transmission control characters (LIS01-A2 8.6). */
export const STX = 0x02;
export const ETX = 0x03;
export const EOT = 0x04;
export const ENQ = 0x05;
export const ACK = 0x06;
export const LF = 0x0a;
export const CR = 0x0d;
export const NAK = 0x15;
export const ETB = 0x17;

/** STX + FN + ETX + C1 C2 + CR LF around the text. */
export const FRAME_OVERHEAD = 7;

/** The frame's bytes after the terminator: C1 C2 CR LF at most. */
export const MAX_TAIL = 4;

/**
 * LIS01-A2 8.6: SOH STX ETX EOT ENQ ACK DLE NAK SYN ETB LF DC1-DC4 must not appear in a frame's text. The
 * other C0 controls are not LIS2-A2 data either (only BEL, HT, VT, FF and CR are); refusing them too makes
 * the sender retransmit a frame in which line noise inserted a NUL, which the modulo-256 sum cannot see.
 */
const restricted = byteTable(Array.from({ length: 32 }, (_, i) => i).filter((c) => ![0x07, 0x09, 0x0b, 0x0c, CR].includes(c)));

/** The bytes that end a frame's text: its terminator, or an STX or EOT that cuts it short. */
export const endsText = byteTable([ETX, ETB, STX, EOT]);

/** Why a frame was refused. */
export type FrameInvalidReason = 'framing' | 'checksum' | 'frame-too-long' | 'restricted-character';

/**
 * One decoded frame, or why not; `length` is how many bytes from the STX were consumed. `frameNumber` is null
 * for frames sent without one (`frameFormat: stx-text-etx`); `text` is a view into the decoded bytes.
 * An incomplete frame is `ended` when its ETX or ETB has arrived and only its checksum and trailer have not.
 */
export type FrameResult =
  | { kind: 'frame'; frameNumber: number | null; text: Buffer; final: boolean; length: number; checksum: string | null }
  | { kind: 'incomplete'; ended: boolean }
  | { kind: 'invalid'; reason: FrameInvalidReason; length: number };

/** Modulo-256 sum of FN..ETB/ETX, two uppercase hex digits (LIS01-A2 8.3.3). */
export function checksum(body: Uint8Array): string {
  let sum = 0;
  for (const byte of body) sum = (sum + byte) & 0xff;
  return sum.toString(16).toUpperCase().padStart(2, '0');
}

/** Builds one frame (the emulator's and the fixtures' side of the codec). */
export function encodeFrame(frameNumber: number, text: Buffer, final: boolean): Buffer {
  const body = Buffer.concat([Buffer.from([0x30 + (frameNumber % 8)]), text, Buffer.from([final ? ETX : ETB])]);
  return Buffer.concat([Buffer.from([STX]), body, Buffer.from(checksum(body) + '\r\n', 'latin1')]);
}

/** Decodes the frame starting at `buf[start]` (an STX). Never throws on wire data. */
export function decodeFrame(buf: Buffer, start: number, maxFrameBytes: number, dev: LinkDeviations): FrameResult {
  let end = start + 1;
  while (end < buf.length && buf[end] !== ETX && buf[end] !== ETB) {
    // An STX or EOT inside a frame means the frame was cut short (LIS01-A2 8.5.1: defective frame).
    if (buf[end] === STX || buf[end] === EOT) return { kind: 'invalid', reason: 'framing', length: end - start };
    end++;
    if (end - start > maxFrameBytes) return { kind: 'invalid', reason: 'frame-too-long', length: end - start };
  }
  if (end >= buf.length) return { kind: 'incomplete', ended: false };
  if (dev.frameFormat === 'stx-text-etx') return textOnly(buf, start, end);
  const tail = readTail(buf, end + 1, dev);
  if (tail.kind !== 'tail') return tail.kind === 'incomplete' ? tail : { ...tail, length: tail.length + end + 1 - start };
  const length = tail.end - start;
  if (end + 1 - start + 4 > maxFrameBytes) return { kind: 'invalid', reason: 'frame-too-long', length };
  const fn = buf[start + 1]! - 0x30;
  if (end === start + 1 || fn < 0 || fn > 7) return { kind: 'invalid', reason: 'framing', length };
  const text = buf.subarray(start + 2, end);
  if (hasRestricted(text)) return { kind: 'invalid', reason: 'restricted-character', length };
  if (tail.sent !== null && tail.sent !== checksum(buf.subarray(start + 1, end + 1))) {
    return { kind: 'invalid', reason: 'checksum', length };
  }
  return { kind: 'frame', frameNumber: fn, text, final: buf[end] === ETX, length, checksum: tail.sent };
}

/** `STX text ETX`: no frame number, no checksum, no trailer; the text is accepted unverified. */
function textOnly(buf: Buffer, start: number, end: number): FrameResult {
  const length = end + 1 - start;
  const text = buf.subarray(start + 1, end);
  if (hasRestricted(text)) return { kind: 'invalid', reason: 'restricted-character', length };
  return { kind: 'frame', frameNumber: null, text, final: buf[end] === ETX, length, checksum: null };
}

function hasRestricted(text: Uint8Array): boolean {
  for (let i = 0; i < text.length; i++) if (restricted[text[i]!] === 1) return true;
  return false;
}

/** A 256-entry table: 1 for the given bytes (a lookup per byte, no hashing). */
export function byteTable(bytes: readonly number[]): Uint8Array {
  const table = new Uint8Array(256);
  for (const b of bytes) table[b] = 1;
  return table;
}

type Tail =
  | { kind: 'tail'; sent: string | null; end: number }
  | { kind: 'incomplete'; ended: true }
  | { kind: 'invalid'; reason: 'framing' | 'checksum'; length: number };

/** C1 C2 and the trailer after ETB/ETX; `at` is the first byte after the terminator. */
function readTail(buf: Buffer, at: number, dev: LinkDeviations): Tail {
  const first = buf[at];
  if (first === undefined) return { kind: 'incomplete', ended: true };
  if (dev.missingChecksum && (first === CR || first === LF)) return trailer(buf, at, null, dev);
  if (buf.length < at + 2) return { kind: 'incomplete', ended: true };
  const sent = buf.toString('latin1', at, at + 2);
  if (!/^[0-9A-Fa-f]{2}$/.test(sent)) return { kind: 'invalid', reason: 'checksum', length: 2 };
  if (sent !== sent.toUpperCase() && !dev.lowerCaseChecksum) return { kind: 'invalid', reason: 'checksum', length: 2 };
  return trailer(buf, at + 2, sent.toUpperCase(), dev);
}

function trailer(buf: Buffer, at: number, sent: string | null, dev: LinkDeviations): Tail {
  const allow = new Set(dev.trailers);
  const a = buf[at];
  const offset = sent === null ? 0 : 2;
  if (a === undefined) return { kind: 'incomplete', ended: true };
  if (a === LF) return allow.has('LF') ? { kind: 'tail', sent, end: at + 1 } : bad(offset + 1);
  if (a !== CR) return bad(offset);
  const b = buf[at + 1];
  if (b === LF && allow.has('CRLF')) return { kind: 'tail', sent, end: at + 2 };
  // A CR-only sender waits for our reply after the CR: do not wait for an LF that will not come.
  if (allow.has('CR')) return { kind: 'tail', sent, end: at + 1 };
  if (b === undefined) return { kind: 'incomplete', ended: true };
  return bad(offset + 1);
}

function bad(length: number): Tail {
  return { kind: 'invalid', reason: 'framing', length };
}
