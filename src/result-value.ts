// The one reader of result values for every driver (ARCHITECTURE.md invariant 8: a censored value is never a number).
// A value is a number only when the analyzer wrote exactly one number: `<0.5`, `>2000` keep their comparator and their
// bound apart and have no value; `POS`, `***.*`, `1:128` are text. The reader is a single left-to-right scan with no
// regular expression, so a run of 100,000 digits costs what its length costs and nothing more.
//
// What counts as a number, for ASTM R.4, HL7 OBX-5 and printed lines alike:
//   [sign] digits [. digits] | [sign] . digits, optionally followed by an exponent e|E [sign] digits.
// HL7 NM (Chapter 2A) and LIS2-A2 write no exponent, but analyzers that print counts in scientific notation
// (`1.2E+06` copies/mL) mean exactly that number, so an exponent is accepted everywhere alike. A comma as decimal
// separator is not (`1,5` is text): it is ambiguous with a thousands separator.
import type { Comparator } from './result.js';

/**
 * Longest trimmed text that may be read as a number. A double carries 17 significant digits; 64 characters leave room
 * for leading zeros, a sign, a comparator and an exponent, and bound the work spent on any one value.
 */
export const MAX_NUMERIC_LENGTH = 64;

/** What a result's value text says, in the keyed result's terms. */
export type ValueReading =
  | { kind: 'empty' }
  | { kind: 'exact'; value: number }
  | { kind: 'censored'; comparator: Comparator; bound: number }
  /** Only `*`, `+`, `-` (and a decimal point): the analyzer withheld the number (`***.*`, `----`, `++++`). */
  | { kind: 'masked' }
  | { kind: 'text'; reason: string };

/** The three numeric fields of a keyed result for a reading: `value` is set only for an exact number. */
export interface ValueFields {
  value: number | null;
  comparator: Comparator | null;
  bound: number | null;
}

// Character codes the scanner compares against.
const TAB = 9;
const SPACE = 32;
const STAR = 42;
const PLUS = 43;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const ONE = 49;
const NINE = 57;
const LESS = 60;
const EQUALS = 61;
const GREATER = 62;
const UPPER_E = 69;
const LOWER_E = 101;

/** Reads a value as sent; surrounding whitespace is ignored. */
export function readValue(text: string): ValueReading {
  const s = text.trim();
  if (s === '') return { kind: 'empty' };
  if (s.length > MAX_NUMERIC_LENGTH) return isMask(s) ? { kind: 'masked' } : { kind: 'text', reason: `longer than ${MAX_NUMERIC_LENGTH} characters` };
  const { comparator, at } = readComparator(s);
  let from = at;
  while (from < s.length && (s.charCodeAt(from) === SPACE || s.charCodeAt(from) === TAB)) from += 1;
  const scan = scanNumber(s, from);
  if (scan === undefined || scan.end !== s.length) return isMask(s) ? { kind: 'masked' } : { kind: 'text', reason: 'not a number' };
  const number = Number(s.slice(from));
  if (!Number.isFinite(number)) return { kind: 'text', reason: 'too large to be a number' };
  // `1e-400` reads as 0: the analyzer did not send zero.
  if (number === 0 && scan.nonZeroDigit) return { kind: 'text', reason: 'too small to be a number' };
  return comparator === null ? { kind: 'exact', value: number } : { kind: 'censored', comparator, bound: number };
}

/** The keyed result's `value`, `comparator` and `bound` for a value text. */
export function valueFields(text: string): ValueFields {
  return fieldsOf(readValue(text));
}

/** The keyed result's numeric fields for a reading. */
export function fieldsOf(reading: ValueReading): ValueFields {
  if (reading.kind === 'exact') return { value: reading.value, comparator: null, bound: null };
  if (reading.kind === 'censored') return { value: null, comparator: reading.comparator, bound: reading.bound };
  return { value: null, comparator: null, bound: null };
}

function readComparator(s: string): { comparator: Comparator | null; at: number } {
  const first = s.charCodeAt(0);
  if (first !== LESS && first !== GREATER) return { comparator: null, at: 0 };
  const orEqual = s.charCodeAt(1) === EQUALS;
  const sign = first === LESS ? '<' : '>';
  return orEqual ? { comparator: `${sign}=`, at: 2 } : { comparator: sign, at: 1 };
}

/** Scans `[sign] mantissa [exponent]` from `from`; undefined when no number starts there. */
function scanNumber(s: string, from: number): { end: number; nonZeroDigit: boolean } | undefined {
  let i = from;
  const c0 = s.charCodeAt(i);
  if (c0 === PLUS || c0 === MINUS) i += 1;
  const whole = digits(s, i);
  i = whole.end;
  let fraction = { end: i, count: 0, nonZero: false };
  if (s.charCodeAt(i) === DOT) {
    fraction = digits(s, i + 1);
    i = fraction.end;
  }
  if (whole.count === 0 && fraction.count === 0) return undefined;
  const e = s.charCodeAt(i);
  if (e === LOWER_E || e === UPPER_E) {
    let j = i + 1;
    const sign = s.charCodeAt(j);
    if (sign === PLUS || sign === MINUS) j += 1;
    const exponent = digits(s, j);
    if (exponent.count === 0) return undefined;
    i = exponent.end;
  }
  return { end: i, nonZeroDigit: whole.nonZero || fraction.nonZero };
}

function digits(s: string, from: number): { end: number; count: number; nonZero: boolean } {
  let i = from;
  let nonZero = false;
  for (; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c < ZERO || c > NINE) break;
    if (c >= ONE) nonZero = true;
  }
  return { end: i, count: i - from, nonZero };
}

// `***.*`, `----`, `++++`: at least one mask character, at most one decimal point, nothing else.
function isMask(s: string): boolean {
  let marks = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c === STAR || c === PLUS || c === MINUS) marks += 1;
    else if (c === DOT) dots += 1;
    else return false;
  }
  return marks > 0 && dots <= 1;
}
