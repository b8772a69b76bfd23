// The delimiters of one LIS2-A2 message, read from its H record by the rule (LIS2-A2 7.1, H.1 and H.2): the field
// delimiter is the character after `H`; H.2, up to the next field delimiter, declares the repeat, component and escape
// delimiters in that order. A definition that cannot be read so is refused with its reason, never guessed: a guess
// that shifts the header's fields loses H.12 = Q, and a QC run goes out as patient results.

/** The four delimiters of a message; `escape` is null when H.2 declares none (escape sequences are then plain text). */
export interface Delimiters {
  field: string;
  repeat: string;
  component: string;
  escape: string | null;
}

/** The standard's delimiters (`H|\^&`), used only until a header is read. */
export const standardDelimiters: Delimiters = { field: '|', repeat: '\\', component: '^', escape: '&' };

export type DelimiterReading = { kind: 'delimiters'; delimiters: Delimiters } | { kind: 'invalid'; reason: string };

/**
 * Reads the delimiters from an H record (its text from the `H`). A character written twice in a row in H.2 counts
 * once (`H|\\^&`: a C-string example copied into firmware); two delimiters (no escape) are accepted; anything else
 * that is not three distinct delimiter characters is invalid.
 */
export function readDelimiters(header: string): DelimiterReading {
  const field = header[1];
  if (header[0] !== 'H' || field === undefined || !canDelimit(field)) {
    return { kind: 'invalid', reason: `H record has no field delimiter after H (got ${describe(field)})` };
  }
  const end = header.indexOf(field, 2);
  const definition = end < 0 ? header.slice(2) : header.slice(2, end);
  const chars = [...definition].filter((c, i, all) => c !== all[i - 1]);
  const invalid = (why: string): DelimiterReading => ({ kind: 'invalid', reason: `H.2 delimiter definition '${definition.slice(0, 8)}' ${why}` });
  if (chars.length < 2) return invalid('must declare the repeat and component delimiters (LIS2-A2 7.1.2)');
  if (chars.length > 3) return invalid(`declares ${chars.length} delimiters; LIS2-A2 has repeat, component and escape`);
  if (new Set([field, ...chars]).size !== chars.length + 1) return invalid('uses one character for two delimiters');
  const unusable = chars.find((c) => !canDelimit(c));
  if (unusable !== undefined) return invalid(`uses ${describe(unusable)}, which cannot be a delimiter`);
  return { kind: 'delimiters', delimiters: { field, repeat: chars[0]!, component: chars[1]!, escape: chars[2] ?? null } };
}

// Letters, digits and space are data; CR and LF end records; half of a surrogate pair is not a character (a non-BMP
// character in UTF-8 mode would leave lone surrogates in every value it splits).
function canDelimit(c: string): boolean {
  const code = c.charCodeAt(0);
  if (c.length !== 1 || (code >= 0xd800 && code <= 0xdfff)) return false;
  return !/[A-Za-z0-9 \r\n]/.test(c);
}

function describe(c: string | undefined): string {
  if (c === undefined) return 'nothing';
  const code = c.charCodeAt(0);
  return code > 0x20 && code < 0x7f ? `'${c}'` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
