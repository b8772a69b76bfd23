// LIS2-A2 (E1394) records: split on CR after the frame texts of a message are reassembled, delimiters read
// from the H record itself, escapes undone per component, and H/P/O/R/C nesting resolved into one entry
// per result with the records it belongs to.

/** The four delimiters of a message, from `H|\^&` (LIS2-A2 7.1: field, repeat, component, escape). */
export interface Delimiters {
  field: string;
  repeat: string;
  component: string;
  escape: string;
}

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
  /** Q records: host queries, which a receive-only gateway does not answer. */
  queries: number;
  terminated: boolean;
}

/** The standard's delimiters, used only until a header is read. */
export const standardDelimiters: Delimiters = { field: '|', repeat: '\\', component: '^', escape: '&' };

/** Splits reassembled text into record strings (CR; LF and CR LF too, for `framing: none`). */
export function splitRecords(text: string): string[] {
  return text.split(/\r\n|\r|\n/).filter((r) => r.trim().length > 0);
}

/** Reads the delimiters from an H record; undefined when the header does not declare four distinct ones. */
export function readDelimiters(header: string): Delimiters | undefined {
  if (header[0] !== 'H' || header.length < 5) return undefined;
  const [field, repeat, component, escape] = [header[1]!, header[2]!, header[3]!, header[4]!];
  if (new Set([field, repeat, component, escape]).size !== 4 || /[A-Za-z0-9 ]/.test(field + repeat + component + escape)) {
    return undefined;
  }
  return { field, repeat, component, escape };
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
    const type = line.trimStart()[0]?.toUpperCase() ?? '';
    if (type === 'H') {
      delimiters = readDelimiters(line.trimStart()) ?? standardDelimiters;
      current = { header: record(line.trimStart(), delimiters), results: [], queries: 0, terminated: false };
      messages.push(current);
      [patient, order, last] = [null, null, null];
      continue;
    }
    if (!current) {
      current = { header: null, results: [], queries: 0, terminated: false };
      messages.push(current);
    }
    const rec = record(line.trimStart(), delimiters);
    if (type === 'P') [patient, order, last] = [rec, null, null];
    else if (type === 'O') [order, last] = [rec, null];
    else if (type === 'Q') current.queries++;
    else if (type === 'L') current.terminated = true;
    else if (type === 'C' && last) last.comments.push(rec);
    else if (type === 'R' && current.header) {
      last = { header: current.header, patient, order, result: rec, comments: [] };
      current.results.push(last);
    }
  }
  return messages;
}

function record(line: string, d: Delimiters): AstmRecord {
  const type = line[0]!.toUpperCase();
  return { type, fields: type === 'H' ? headerFields(line, d) : line.split(d.field), delimiters: d };
}

/** H.2 holds the delimiters themselves and is not split (LIS2-A2 7.1.2). */
function headerFields(line: string, d: Delimiters): string[] {
  const rest = line.slice(5);
  const tail = rest.startsWith(d.field) ? rest.slice(1).split(d.field) : rest.length ? [rest] : [];
  return ['H', line.slice(2, 5), ...tail];
}

/** The raw field `n` (1-based, the record type is field 1), or ''. */
export function rawField(rec: AstmRecord, n: number): string {
  return rec.fields[n - 1] ?? '';
}

/** Unescaped component `c` (1-based) of the first repeat of field `n`. */
export function component(rec: AstmRecord, n: number, c: number): string {
  const d = rec.delimiters;
  const firstRepeat = rawField(rec, n).split(d.repeat)[0] ?? '';
  return unescape(firstRepeat.split(d.component)[c - 1] ?? '', d);
}

/** All components of the first repeat of field `n`, unescaped. */
export function components(rec: AstmRecord, n: number): string[] {
  const d = rec.delimiters;
  return (rawField(rec, n).split(d.repeat)[0] ?? '').split(d.component).map((c) => unescape(c, d));
}

/** Each repeat of field `n`, unescaped whole (components kept with their delimiter). */
export function repeats(rec: AstmRecord, n: number): string[] {
  const d = rec.delimiters;
  return rawField(rec, n).split(d.repeat).map((r) => unescape(r, d));
}

/** The whole field `n` unescaped: for single-valued fields such as R.4. */
export function fieldText(rec: AstmRecord, n: number): string {
  return unescape(rawField(rec, n), rec.delimiters);
}

/** LIS2-A2 7.1.5: &F& &S& &R& &E& and &Xhh..& (hex bytes, Latin-1); other sequences are kept as sent. */
export function unescape(s: string, d: Delimiters): string {
  if (!s.includes(d.escape)) return s;
  const e = d.escape.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return s.replace(new RegExp(`${e}(F|S|R|E|X(?:[0-9A-Fa-f]{2})+)${e}`, 'g'), (_m, code: string) => {
    if (code === 'F') return d.field;
    if (code === 'S') return d.component;
    if (code === 'R') return d.repeat;
    if (code === 'E') return d.escape;
    return Buffer.from(code.slice(1), 'hex').toString('latin1');
  });
}

/** True when a record (raw bytes, no CR) is an L terminator record. */
export function isTerminatorRecord(rec: Uint8Array, fieldDelimiter: string): boolean {
  if (rec[0] !== 0x4c && rec[0] !== 0x6c) return false;
  return rec.length === 1 || rec[1] === fieldDelimiter.charCodeAt(0);
}
