// The writing side of parse.ts, and the one way text reaches an HL7 instrument (ARCHITECTURE.md invariant 10): every
// leaf is fitted to the instrument's charset (src/charset.ts), then escaped, so no text, from the LIMS or echoed from
// the analyzer, can add, end or split a segment or an MLLP block; the bytes are checked once more after encoding.
import { encodeChecked, fitToCharset, type Charset } from '../../src/charset.js';
import { encodingCharacters, type Delimiters } from './delimiters.js';
import { escapeText } from './escape.js';
import { CR, FS, VT } from './mllp.js';

/** A field as values: repetitions of components of subcomponents, each leaf unescaped text. */
export type FieldValue = string[][][];

/** One segment to write: `fields[0]` is SEG-1; for MSH it is MSH-3 (MSH-1 and MSH-2 come from the delimiters). */
export interface SegmentValue {
  id: string;
  fields: readonly FieldValue[];
}

/** A message's payload (no MLLP bytes) in the instrument's charset, or why it is not sent. */
export type EncodedMessage = { kind: 'encoded'; payload: Buffer; substituted: number } | { kind: 'refused'; reason: string };

type Leaf = (value: string) => string;

const escapeOnly =
  (d: Delimiters): Leaf =>
  (value) =>
    escapeText(value, d);

/** Escapes and joins one field (2.5.5: repetition, then component, then subcomponent). */
export function encodeField(value: FieldValue, d: Delimiters, leaf: Leaf = escapeOnly(d)): string {
  return value.map((rep) => rep.map((comp) => comp.map(leaf).join(d.subcomponent)).join(d.component)).join(d.repetition);
}

/** Writes one segment as text (no terminator). For MSH pass MSH-3 onwards: MSH-1 and MSH-2 come from `d`. */
export function encodeSegment(id: string, fields: readonly FieldValue[], d: Delimiters, leaf: Leaf = escapeOnly(d)): string {
  const body = fields.map((f) => encodeField(f, d, leaf));
  if (id === 'MSH') return ['MSH', encodingCharacters(d), ...body].join(d.field);
  return [id, ...body].join(d.field);
}

/**
 * The payload of one message for an instrument whose charset is `charset`: each leaf fitted (a character the charset
 * cannot carry replaced, counted in `substituted`) and escaped, each segment ended by CR (2.5.2). Refused when the
 * bytes would not read back as written, hold an MLLP byte, or hold a CR other than the segment terminators.
 */
export function encodeMessage(segments: readonly SegmentValue[], d: Delimiters, charset: Charset): EncodedMessage {
  let substituted = 0;
  const leaf: Leaf = (value) => {
    const fitted = fitToCharset(value, charset);
    substituted += fitted.substituted;
    return escapeText(fitted.text, d);
  };
  const text = segments.map((s) => encodeSegment(s.id, s.fields, d, leaf) + '\r').join('');
  const encoded = encodeChecked(text, charset);
  if (encoded.kind === 'refused') return encoded;
  const problem = wireProblem(encoded.bytes, segments.length, d);
  return problem === null ? { kind: 'encoded', payload: encoded.bytes, substituted } : { kind: 'refused', reason: problem };
}

/** Why bytes meant as `segments` segments could be misread on an MLLP link, or null. */
function wireProblem(bytes: Buffer, segments: number, d: Delimiters): string | null {
  // The message's own delimiters are the only other control characters allowed (2.5.4 lets a sender choose them).
  const delimiters = new Set([d.field, d.component, d.repetition, d.escape, d.subcomponent, d.truncation ?? d.field].map((c) => c.charCodeAt(0)));
  let crs = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === VT || byte === FS) return 'an MLLP block character in the text';
    if (byte === CR) crs += 1;
    else if ((byte < 0x20 || byte === 0x7f) && !delimiters.has(byte)) return 'a control character in the text';
  }
  return crs === segments ? null : `${crs} segment terminators for ${segments} segments`;
}

/** A plain text leaf as a FieldValue (`''` gives an empty field). */
export function text(value: string): FieldValue {
  return [[[value]]];
}

/** Components given as plain text leaves. */
export function components(...values: string[]): FieldValue {
  return [values.map((v) => [v])];
}
