// What a configuration form's fields may hold, beyond what the schema checks. A value never becomes YAML text (it is a
// scalar in the document, instrument-edits.ts) nor markup (every page escapes it), but a value that could only be an
// attempt to be one is refused by name rather than stored: control characters (a line break is how a key is smuggled
// into YAML), markup (`<script>`, `<img ...>`), and in codes and units the quote and brace characters no analyzer uses.
import { readLoinc } from '../../config/loinc.js';

/** A problem with one field (`loinc.2`, `port`), or with the form as a whole (`field` null). */
export interface FieldProblem {
  field: string | null;
  message: string;
}

// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// A tag or comment opener; `(?<name>` and `(?<=` in a regular expression (a line layout's option) are not markup.
const MARKUP = /(?<!\(\?)<[A-Za-z/!?]/;
const CODE_OR_UNIT_REFUSED = /["'`<>{}\\]/;

/** Why free text cannot go into a field, or null. */
export function textProblem(value: string, what: string): string | null {
  if (CONTROL.test(value)) return `${what} holds a control character (a line break, a tab...); type it on one line`;
  if (MARKUP.test(value))
    return `${what} looks like HTML markup (${JSON.stringify(value.slice(value.search(MARKUP), value.search(MARKUP) + 12))}); it is not a value for this field`;
  return null;
}

/** An analyzer test code as the driver extracts it: printable, one line, at most 64 characters. */
export function codeProblem(code: string): string | null {
  if (code.trim() === '') return 'enter the analyzer code';
  if (code.length > 64) return 'an analyzer code has at most 64 characters';
  return textProblem(code, 'the code') ?? (CODE_OR_UNIT_REFUSED.test(code) ? 'an analyzer code has no quotes, braces, backslashes or < >' : null);
}

/** A unit as the analyzer sends it (`mmol/L`, `10*3/uL`, `mL/min/{1.73_m2}`): printable, one line, at most 32 characters. */
export function unitProblem(unit: string): string | null {
  if (unit.length > 32) return 'a unit has at most 32 characters';
  return textProblem(unit, 'the unit') ?? (/["'`<>\\]/.test(unit) ? 'a unit has no quotes, backslashes or < >' : null);
}

/** The LOINC field: a LOINC whose check digit holds, or a local X code. */
export function loincProblem(loinc: string): string | null {
  const read = readLoinc(loinc);
  return read.kind === 'invalid' ? read.reason : null;
}

/** A whole number in a range, or why not. */
export function wholeNumber(text: string, min: number, max: number, what: string): number | string {
  const n = /^\s*\d{1,6}\s*$/.test(text) ? Number(text) : NaN;
  return Number.isInteger(n) && n >= min && n <= max ? n : `${what}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(text.slice(0, 20))}`;
}

/** One of the allowed words, or why not. */
export function oneOf<T extends string>(text: string, allowed: readonly T[], what: string): T | string {
  return (allowed as readonly string[]).includes(text) ? (text as T) : `${what}: expected one of ${allowed.join(', ')}`;
}
