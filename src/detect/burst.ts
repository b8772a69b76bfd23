// What one burst of bytes, read under one serial setting, says. A burst read at the sender's own setting holds what
// the protocols send: LIS01-A2 ENQ/EOT (8.2, 8.4) or STX frames (8.3), MLLP blocks (HL7 MLLP Release 1, section 2:
// VT message FS CR) or printed lines. Read at a wrong rate it holds what a UART makes of foreign bit times: NUL bytes
// where the line stayed low longer than a character (Linux reads a break as NUL), bytes with the high bit set where
// the receiver ran past the sender's character into idle line (0xFE, 0xFF), and short runs with the rest dropped for
// framing errors (node-serialport sets IGNPAR). So the verdict is: a protocol, or noise with the reason.
/* eslint-disable no-control-regex -- the framing characters (STX, ETX, ETB, VT) are what these patterns look for */
import { ENQ, EOT, ETB, ETX, STX } from '../../drivers/astm/frame.js';
import { FS, VT } from '../../drivers/hl7/mllp.js';

/** The protocol a burst shows, with the facts the page reports. */
export type Recognition =
  | { protocol: 'astm'; form: 'link'; enq: number; eot: number; frames: number }
  | { protocol: 'astm'; form: 'records' }
  | { protocol: 'hl7'; form: 'mllp'; messages: number }
  | { protocol: 'hl7'; form: 'segments' }
  | { protocol: 'line'; form: 'lines' | 'stx-etx'; lines: number; delimiter: '\r\n' | '\n' | '\r' };

/** Which data formats the bytes are consistent with (read with 8 data bits, bit 7 is a 7-bit sender's parity bit). */
export interface Formats {
  '8N1': boolean;
  '7E1': boolean;
  '7O1': boolean;
}

export type BurstVerdict = { kind: 'recognized'; recognition: Recognition; formats: Formats } | { kind: 'noise'; why: string };

const NUL = 0x00;
const CR = 0x0d;
const LF = 0x0a;

/** Judges one burst received with `dataBits` data bits. */
export function judgeBurst(bytes: Buffer, dataBits: 7 | 8): BurstVerdict {
  if (dataBits === 7) {
    const verdict = recognize(bytes);
    return verdict.kind === 'noise' ? verdict : { ...verdict, formats: { '8N1': false, '7E1': true, '7O1': true } };
  }
  let high = 0;
  let even = true;
  let odd = true;
  for (const b of bytes) {
    if (b & 0x80) high++;
    const ones = popcount(b) & 1;
    even &&= ones === 0;
    odd &&= ones === 1;
  }
  // A 7-bit sender's parity bit lands in bit 7: parity consistent over every byte, and the low seven bits make sense.
  if (high > 0 && (even || odd)) {
    const verdict = recognize(Buffer.from(bytes.map((b) => b & 0x7f)));
    if (verdict.kind === 'recognized') return { ...verdict, formats: { '8N1': false, '7E1': even, '7O1': odd } };
  }
  const verdict = recognize(bytes);
  if (verdict.kind === 'noise') return verdict;
  return { ...verdict, formats: { '8N1': true, '7E1': high === 0 && even, '7O1': high === 0 && odd } };
}

type Recognized = { kind: 'recognized'; recognition: Recognition } | { kind: 'noise'; why: string };

function recognize(bytes: Buffer): Recognized {
  const n = bytes.length;
  if (n === 0) return { kind: 'noise', why: 'nothing' };
  const nul = count(bytes, (b) => b === NUL);
  if (nul > 0 && nul * 20 > n) return { kind: 'noise', why: `framing noise: ${nul} of ${n} bytes are NUL (the line held low longer than a character)` };
  const link = astmLink(bytes);
  if (link) return { kind: 'recognized', recognition: link };
  const text = bytes.toString('latin1');
  const mllp = mllpBlocks(bytes, text);
  if (mllp) return { kind: 'recognized', recognition: mllp };
  const high = count(bytes, (b) => b >= 0x80);
  if (high * 10 > n) return { kind: 'noise', why: `${high} of ${n} bytes have the high bit set` };
  if (!mostlyText(bytes)) return { kind: 'noise', why: noText(bytes) };
  if (/(^|[\r\n\x02])MSH[|^~\\&]/.test(text)) return { kind: 'recognized', recognition: { protocol: 'hl7', form: 'segments' } };
  if (/(^|[\r\n\x02]|\x02[0-7])H([|!@#$%*;,])[^\r\n]{3}/.test(text) && astmHeader(text))
    return { kind: 'recognized', recognition: { protocol: 'astm', form: 'records' } };
  const lines = printedLines(bytes, text);
  if (lines) return { kind: 'recognized', recognition: lines };
  return { kind: 'noise', why: noText(bytes) };
}

const FRAME = /\x02[0-7][^\x02\x03\x17]*[\x03\x17][0-9A-Fa-f]{2}\r\n/g;

// LIS01-A2 8.2/8.4: an unanswered sender repeats ENQ and gives up with EOT; a sender that does not wait for the
// host may also send whole frames (<STX> FN text <ETB|ETX> C1 C2 <CR><LF>).
function astmLink(bytes: Buffer): Recognition | null {
  let enq = 0;
  let eot = 0;
  for (const b of bytes) {
    if (b === ENQ) enq++;
    else if (b === EOT) eot++;
  }
  if (enq + eot === bytes.length) return { protocol: 'astm', form: 'link', enq, eot, frames: 0 };
  const text = bytes.toString('latin1');
  const frames = text.match(FRAME) ?? [];
  if (frames.length === 0) return null;
  const rest = text.replace(FRAME, '');
  if ([...rest].some((c) => c.charCodeAt(0) !== ENQ && c.charCodeAt(0) !== EOT)) return null;
  return { protocol: 'astm', form: 'link', enq, eot, frames: frames.length };
}

// An MLLP block: VT, then MSH and its field separator (HL7 v2.5 2.5.4: MSH-1), text, FS CR.
function mllpBlocks(bytes: Buffer, text: string): Recognition | null {
  const starts = text.match(/\x0bMSH[|^~\\&!#$%*]/g)?.length ?? 0;
  if (starts === 0) return null;
  // The text inside blocks is printable (segments end in CR); what is outside is at most the FS CR of a block.
  const outsideOrControl = count(bytes, (b) => b < 0x20 && b !== VT && b !== FS && b !== CR && b !== LF && b !== 0x09);
  if (outsideOrControl * 50 > bytes.length) return null;
  return { protocol: 'hl7', form: 'mllp', messages: starts };
}

// LIS2-A2 7.1: the header begins H, the field delimiter, then the repeat, component and escape delimiters.
function astmHeader(text: string): boolean {
  const m = /H([|!@#$%*;,])(.)(.)(.)/.exec(text);
  if (!m) return false;
  const delimiters = new Set(m.slice(1, 5));
  return delimiters.size === 4 && [...delimiters].every((c) => /[!-/:-@[-`{-~]/.test(c));
}

function printedLines(bytes: Buffer, text: string): Recognition | null {
  const crlf = text.split('\r\n').length - 1;
  const cr = count(bytes, (b) => b === CR) - crlf;
  const lf = count(bytes, (b) => b === LF) - crlf;
  const stxEtx = (text.match(/\x02[^\x02\x03]*\x03/g) ?? []).length;
  const ends = crlf + cr + lf;
  if (ends === 0 && stxEtx === 0) return null;
  // Words and numbers, not punctuation soup: letters, digits and spaces make most of a printed report.
  const wordy = count(bytes, (b) => (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a) || b === 0x20);
  const printable = count(bytes, (b) => b >= 0x20 && b !== 0x7f);
  if (wordy < 8 || wordy * 10 < printable * 6) return null;
  const delimiter = crlf >= cr && crlf >= lf ? '\r\n' : lf >= cr ? '\n' : '\r';
  return { protocol: 'line', form: stxEtx > 0 && stxEtx >= ends ? 'stx-etx' : 'lines', lines: Math.max(ends, stxEtx), delimiter };
}

// Text: printable ASCII (Latin-1 letters allowed), line ends, tabs, form feeds and STX/ETX/ETB framing.
function mostlyText(bytes: Buffer): boolean {
  const bad = count(bytes, (b) => !isTextByte(b));
  return bad * 50 <= bytes.length;
}

function isTextByte(b: number): boolean {
  return (b >= 0x20 && b < 0x7f) || b >= 0xa0 || b === CR || b === LF || b === 0x09 || b === 0x0c || b === STX || b === ETX || b === ETB;
}

function noText(bytes: Buffer): string {
  const controls = count(bytes, (b) => !isTextByte(b) && b < 0x80);
  if (controls > 0) return `${controls} of ${bytes.length} bytes are control characters no protocol sends there`;
  if (bytes.length < 16) return `${bytes.length} byte${bytes.length === 1 ? '' : 's'}: no ENQ, no MLLP block, no line of text`;
  return 'no ENQ, no MLLP block, no line of words';
}

function count(bytes: Buffer, test: (b: number) => boolean): number {
  let n = 0;
  for (const b of bytes) if (test(b)) n++;
  return n;
}

function popcount(b: number): number {
  let n = 0;
  for (let x = b; x; x >>= 1) n += x & 1;
  return n;
}
