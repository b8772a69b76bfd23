// The one way text reaches an ASTM instrument (ARCHITECTURE.md invariant 10): records as values, each value fitted to
// the instrument's charset (src/charset.ts), its control characters and delimiters replaced or escaped (LIS2-A2 7.1.5),
// then encoded and checked, so no text from the LIMS or echoed from the analyzer can add, end or split a record or put
// a restricted character (LIS01-A2 8.6) inside a frame.
import { encodeChecked, fitToCharset, type Charset } from '../../src/charset.js';
import type { Delimiters } from './delimiters.js';

/** A field as values: repeats of components, each leaf unescaped text. */
export type FieldValue = readonly (readonly string[])[];

/** One record to write: its type letter and its fields from field 2 on (for H, from H.3: H.2 comes from the delimiters). */
export interface RecordValue {
  type: string;
  fields: readonly FieldValue[];
}

/** A message's text (records ended by CR) in the instrument's charset, or why it is not sent. */
export type EncodedRecords = { kind: 'encoded'; text: Buffer; substituted: number } | { kind: 'refused'; reason: string };

// C0 controls (CR would end the record; STX, ETX, ETB, EOT, ENQ the frame or the transfer), DEL and the C1 controls.
// eslint-disable-next-line no-control-regex
const control = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex
const controls = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * True when `value` is written exactly as it is: an identifier (an accession, a patient id, a test code) that is not
 * must not be sent at all, since a replaced character would name another specimen.
 */
export function writesExactly(value: string, d: Delimiters, charset: Charset): boolean {
  if (control.test(value) || fitToCharset(value, charset).substituted > 0) return false;
  return d.escape !== null || ![...value].some((c) => c === d.field || c === d.component || c === d.repeat);
}

/**
 * What one value reads back as once written (the documented substitution): fitted to the charset, each control
 * character a space, and each delimiter a space when the header declares no escape character to write it with.
 */
export function fittedValue(value: string, d: Delimiters, charset: Charset): string {
  return fitValue(value, d, charset, { substituted: 0 });
}

function fitValue(value: string, d: Delimiters, charset: Charset, tally: { substituted: number }): string {
  const fitted = fitToCharset(value, charset);
  tally.substituted += fitted.substituted;
  const space = (): string => (tally.substituted++, ' ');
  const clean = fitted.text.replace(controls, space);
  return d.escape !== null ? clean : [...clean].map((c) => (c === d.field || c === d.component || c === d.repeat ? space() : c)).join('');
}

// Most values (codes, dates, digits, plain names) are printable ASCII without a delimiter and travel as they are.
const printableAscii = /^[\x20-\x7e]*$/;

function isPlain(value: string, d: Delimiters): boolean {
  if (!printableAscii.test(value)) return false;
  return !value.includes(d.field) && !value.includes(d.repeat) && !value.includes(d.component) && (d.escape === null || !value.includes(d.escape));
}

/** One value as the records carry it: fitted (fitValue), then each delimiter as an escape sequence (LIS2-A2 7.1.5). */
function writeValue(value: string, d: Delimiters, charset: Charset, tally: { substituted: number }): string {
  if (isPlain(value, d)) return value;
  const e = d.escape;
  const fitted = fitValue(value, d, charset, tally);
  if (e === null) return fitted;
  let out = '';
  for (const c of fitted) {
    const code = c === e ? 'E' : c === d.field ? 'F' : c === d.component ? 'S' : c === d.repeat ? 'R' : null;
    out += code === null ? c : `${e}${code}${e}`;
  }
  return out;
}

/**
 * The text of a message for an instrument whose charset is `charset`: each record's fields joined (trailing empty
 * ones dropped), each record ended by CR. Refused when the bytes would not read back as written, hold a control byte
 * other than the record terminators, or hold a record or a field more or fewer than meant.
 */
export function encodeRecords(records: readonly RecordValue[], d: Delimiters, charset: Charset): EncodedRecords {
  const tally = { substituted: 0 };
  const fieldCounts: number[] = [];
  const lines = records.map((r) => {
    const fields = r.fields.map((f) => f.map((rep) => rep.map((v) => writeValue(v, d, charset, tally)).join(d.component)).join(d.repeat));
    while (fields.length > 0 && fields[fields.length - 1] === '') fields.pop();
    if (r.type === 'H') fields.unshift(d.repeat + d.component + (d.escape ?? ''));
    fieldCounts.push(fields.length);
    return [r.type, ...fields].join(d.field);
  });
  const text = lines.map((line) => line + '\r').join('');
  const encoded = encodeChecked(text, charset);
  if (encoded.kind === 'refused') return encoded;
  const problem = wireProblem(encoded.bytes, charset, records, fieldCounts, d);
  return problem === null ? { kind: 'encoded', text: encoded.bytes, substituted: tally.substituted } : { kind: 'refused', reason: problem };
}

/** Why the bytes could be misread as other records than meant, or null. */
function wireProblem(bytes: Buffer, charset: Charset, records: readonly RecordValue[], fieldCounts: readonly number[], d: Delimiters): string | null {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! < 0x20 && bytes[i] !== 0x0d) return 'a control character in the text';
  const lines = bytes.toString(charset).split('\r');
  if (lines.length !== records.length + 1) return `${lines.length - 1} records for ${records.length}`;
  for (const [i, r] of records.entries()) {
    if (lines[i]![0] !== r.type) return `record ${i + 1} does not start with ${r.type}`;
    if (lines[i]!.split(d.field).length - 1 !== fieldCounts[i]) return `record ${i + 1} holds a field more or fewer than meant`;
  }
  return null;
}
