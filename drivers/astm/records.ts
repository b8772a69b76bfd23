// LIS2-A2 (E1394) records: split on CR after the frame texts of a message are reassembled, delimiters read
// from the H record itself, escapes undone per component, and H/P/O/R/C nesting resolved into one entry
// per result with the records it belongs to.
import { readDelimiters, standardDelimiters, type Delimiters } from './delimiters.js';
import { piece } from '../../src/delimited-text.js';
import type { FieldLocation } from '../../src/field-location.js';

export { readDelimiters, standardDelimiters, type Delimiters } from './delimiters.js';

/** One record: its type letter and its raw (still escaped) fields; `fields[0]` is the type (field 1). */
export interface AstmRecord {
  type: string;
  fields: readonly string[];
  delimiters: Delimiters;
}

/** A result record with the records it nests in (LIS2-A2 5.1: H > P > O > R, C after what it comments). */
export interface ResultEntry {
  header: AstmRecord;
  patient: AstmRecord | null;
  order: AstmRecord | null;
  result: AstmRecord;
  comments: AstmRecord[];
}

/** One H..L message. */
export interface ParsedMessage {
  header: AstmRecord | null;
  results: ResultEntry[];
  /** Q records: host queries (answered in two-way mode, query.ts; rejected by a receive-only gateway). */
  queries: AstmRecord[];
  terminated: boolean;
  /** Why the whole message cannot be read (its header's delimiter definition); it then has no results. */
  invalid?: string;
  /** Lines that are not records (no type letter followed by the field delimiter); they are not read. */
  strayLines: number;
}

/** Splits reassembled text into record strings (CR; LF and CR LF too, for `framing: none`). */
export function splitRecords(text: string): string[] {
  return text.split(/\r\n|\r|\n/).filter((r) => r.trim().length > 0);
}

/** Parses a message's text into H..L messages with one entry per R record. */
export function parseRecords(text: string): ParsedMessage[] {
  const messages: ParsedMessage[] = [];
  let current: ParsedMessage | null = null;
  let delimiters = standardDelimiters;
  let patient: AstmRecord | null = null;
  let order: AstmRecord | null = null;
  let last: ResultEntry | null = null;
  for (const line of splitRecords(text)) {
    const rec = line.trimStart();
    if (isHeader(rec)) {
      const read = readDelimiters(rec);
      delimiters = read.kind === 'delimiters' ? read.delimiters : { ...standardDelimiters, field: rec[1]! };
      current = read.kind === 'delimiters' ? newMessage(record(rec, delimiters)) : { ...newMessage(null), invalid: read.reason };
      messages.push(current);
      [patient, order, last] = [null, null, null];
      continue;
    }
    if (!current) {
      current = newMessage(null);
      messages.push(current);
    }
    const type = recordType(rec, delimiters.field);
    if (type === undefined) current.strayLines++;
    else if (type === 'L') current.terminated = true;
    if (type === undefined || type === 'L' || current.invalid !== undefined) continue;
    const r = record(rec, delimiters);
    if (type === 'P') [patient, order, last] = [r, null, null];
    else if (type === 'O') [order, last] = [r, null];
    else if (type === 'Q') current.queries.push(r);
    else if (type === 'C' && last) last.comments.push(r);
    else if (type === 'R' && current.header) {
      last = { header: current.header, patient, order, result: r, comments: [] };
      current.results.push(last);
    }
  }
  return messages;
}

function newMessage(header: AstmRecord | null): ParsedMessage {
  return { header, results: [], queries: [], terminated: false, strayLines: 0 };
}

// LIS2-A2 6.3: a record starts with its type, one upper-case letter, then the field delimiter (or nothing more).
// `host|...` or a line of comment text cut by a stray line break is not a record.
function recordType(rec: string, field: string): string | undefined {
  const letter = rec.charCodeAt(0);
  if (letter < 0x41 || letter > 0x5a) return undefined;
  return rec.length === 1 || rec[1] === field ? rec[0] : undefined;
}

/**
 * True when the text holds an H record anywhere (LIS2-A2 6.1: a message begins with one). Text with none is not a
 * message at all; one with an H record, however broken, is.
 */
export function hasHeaderRecord(text: Buffer): boolean {
  const s = text.toString('latin1');
  // One pass: at each line start, skip the blanks trimStart() would, then look at two characters.
  for (let at = 0; at < s.length; at += 1) {
    while (at < s.length && isBlank(s.charCodeAt(at))) at += 1;
    if (s[at] === 'H' && at + 1 < s.length && !/[A-Za-z0-9 \r\n]/.test(s[at + 1]!)) return true;
    while (at < s.length && s.charCodeAt(at) !== 0x0d && s.charCodeAt(at) !== 0x0a) at += 1;
  }
  return false;
}

// What String.prototype.trimStart() removes, in latin1: tab, line ends, VT, FF, space, NBSP.
function isBlank(c: number): boolean {
  return (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0xa0;
}

// An H record declares its own field delimiter: `H` and a character that can be one.
function isHeader(rec: string): boolean {
  return rec[0] === 'H' && rec.length > 1 && !/[A-Za-z0-9 ]/.test(rec[1]!);
}

function record(line: string, d: Delimiters): AstmRecord {
  // H.2 holds the repeat, component and escape delimiters and no field delimiter (LIS2-A2 7.1.2), so splitting the
  // H record on the field delimiter puts every later field where the record says.
  return { type: line[0]!, fields: line.split(d.field), delimiters: d };
}

/** The raw field `n` (1-based, the record type is field 1), or ''. */
export function rawField(rec: AstmRecord, n: number): string {
  return rec.fields[n - 1] ?? '';
}

/** Unescaped component `c` (1-based) of the first repeat of field `n`. */
export function component(rec: AstmRecord, n: number, c: number): string {
  const d = rec.delimiters;
  return unescape(piece(piece(rawField(rec, n), d.repeat, 0), d.component, c - 1), d);
}

/** The unescaped text at a location of this record: the whole field (first repeat) or one component. */
export function textAt(rec: AstmRecord, at: Omit<FieldLocation, 'segment'>): string {
  const d = rec.delimiters;
  const repeat = piece(rawField(rec, at.field), d.repeat, 0);
  return unescape(at.component === undefined ? repeat : piece(repeat, d.component, at.component - 1), d);
}

/** True when a location names a whole field that holds components (read whole, it is several values). */
export function holdsComponents(rec: AstmRecord, at: Omit<FieldLocation, 'segment'>): boolean {
  return at.component === undefined && piece(rawField(rec, at.field), rec.delimiters.repeat, 0).includes(rec.delimiters.component);
}

/** All components of the first repeat of field `n`, unescaped. */
export function components(rec: AstmRecord, n: number): string[] {
  const d = rec.delimiters;
  return (rawField(rec, n).split(d.repeat)[0] ?? '').split(d.component).map((c) => unescape(c, d));
}

/** Each repeat of field `n`, unescaped whole (components kept with their delimiter). */
export function repeats(rec: AstmRecord, n: number): string[] {
  const d = rec.delimiters;
  return rawField(rec, n)
    .split(d.repeat)
    .map((r) => unescape(r, d));
}

/** The whole field `n` unescaped: for single-valued fields such as R.4. */
export function fieldText(rec: AstmRecord, n: number): string {
  return unescape(rawField(rec, n), rec.delimiters);
}

/**
 * LIS2-A2 7.1.5: &F& &S& &R& &E& and &Xhh..& (hex bytes, Latin-1); other sequences are kept as sent. One scan, each
 * character looked at a bounded number of times, whatever the text holds.
 */
export function unescape(s: string, d: Delimiters): string {
  const e = d.escape;
  if (e === null || !s.includes(e)) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const at = s.indexOf(e, i);
    const close = at < 0 ? -1 : s.indexOf(e, at + 1);
    if (close < 0) return out + s.slice(i);
    out += s.slice(i, at);
    const expanded = expand(s.slice(at + 1, close), d, e);
    // Not a sequence: the escape character is data, and the closing one may open the next sequence.
    if (expanded === undefined) [out, i] = [out + e, at + 1];
    else [out, i] = [out + expanded, close + 1];
  }
  return out;
}

function expand(code: string, d: Delimiters, e: string): string | undefined {
  if (code === 'F') return d.field;
  if (code === 'S') return d.component;
  if (code === 'R') return d.repeat;
  if (code === 'E') return e;
  return /^X(?:[0-9A-Fa-f]{2})+$/.test(code) ? Buffer.from(code.slice(1), 'hex').toString('latin1') : undefined;
}

/** True when a record (raw bytes, no CR) is an L terminator record. */
export function isTerminatorRecord(rec: Uint8Array, fieldDelimiter: string): boolean {
  if (rec[0] !== 0x4c) return false;
  return rec.length === 1 || rec[1] === fieldDelimiter.charCodeAt(0);
}
