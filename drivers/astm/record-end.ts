// Whether a message's text so far ends with its L (terminator) record (LIS2-A2 10.1.1), tracked frame by
// frame: only the first two bytes of the text (the H record's field delimiter) and of its last record matter,
// so completing a message never scans the frames before the last one again.
import { CR, LF } from './frame.js';
import { isTerminatorRecord } from './records.js';

/** What the text so far says about its end. */
export interface RecordEnd {
  /** The first two bytes of the whole text (`H` and the field delimiter). */
  readonly first: readonly number[];
  /** The first two bytes of the last record that is not empty. */
  readonly last: readonly number[];
  /** The text so far ends with a record separator (the next byte starts a record). */
  readonly atRecordStart: boolean;
}

/** No text yet. */
export const noRecords: RecordEnd = { first: [], last: [], atRecordStart: true };

/** The end after `text` is appended. Touches only the tail of `text` and its first bytes. */
export function addText(end: RecordEnd, text: Uint8Array): RecordEnd {
  const first = end.first.length >= 2 ? end.first : [...end.first, ...text.subarray(0, 2 - end.first.length)];
  let e = text.length;
  while (e > 0 && isSeparator(text[e - 1]!)) e--;
  if (e === 0) return { first, last: end.last, atRecordStart: end.atRecordStart || text.length > 0 };
  let s = e;
  while (s > 0 && !isSeparator(text[s - 1]!)) s--;
  // A record that began in an earlier frame (no separator before it in this text) continues there.
  const continued = s === 0 && !end.atRecordStart;
  const last = continued
    ? end.last.length >= 2
      ? end.last
      : [...end.last, ...text.subarray(0, Math.min(e, 2 - end.last.length))]
    : [...text.subarray(s, Math.min(e, s + 2))];
  return { first, last, atRecordStart: e < text.length };
}

/** True when the text so far ends with an L record, read with the H record's field delimiter. */
export function endsWithL(end: RecordEnd): boolean {
  const delimiter = end.first[0] === 0x48 && end.first.length > 1 ? String.fromCharCode(end.first[1]!) : '|';
  return isTerminatorRecord(Uint8Array.from(end.last), delimiter);
}

/** True when reassembled text ends with an L record (the end of a LIS2-A2 message). */
export function endsWithTerminator(text: Uint8Array): boolean {
  return endsWithL(addText(noRecords, text));
}

function isSeparator(byte: number): boolean {
  return byte === CR || byte === LF;
}
