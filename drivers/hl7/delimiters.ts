// Message delimiters, read from MSH-1 and MSH-2 of each message (HL7 v2.5.1 Chapter 2, 2.5.4 "Message delimiters"; MSH-1, MSH-2).

/** The separators one message declares for itself. */
export interface Delimiters {
  field: string;
  component: string;
  repetition: string;
  escape: string;
  subcomponent: string;
  /** v2.7+ truncation character (fifth MSH-2 character), when declared. */
  truncation?: string;
}

/** The delimiters HL7 recommends; used only to answer a message whose own MSH could not be read. */
export const defaultDelimiters: Delimiters = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };

export type DelimiterResult = { kind: 'delimiters'; delimiters: Delimiters } | { kind: 'invalid'; reason: string };

/** Reads MSH-1 (the character after `MSH`) and MSH-2 (up to the next field separator). */
export function readDelimiters(mshSegment: string): DelimiterResult {
  if (!mshSegment.startsWith('MSH') || mshSegment.length < 8) return { kind: 'invalid', reason: 'message does not start with an MSH segment' };
  const field = mshSegment[3]!;
  if (/[A-Za-z0-9\r\n ]/.test(field) || isSurrogate(field)) return { kind: 'invalid', reason: 'MSH-1 field separator is not a delimiter character' };
  const end = mshSegment.indexOf(field, 4);
  let chars = end < 0 ? mshSegment.slice(4) : mshSegment.slice(4, end);
  // A character outside the Basic Multilingual Plane is two UTF-16 halves: splitting on it would leave lone halves in
  // values. HL7 delimiters are single characters (2.5.4), so such a definition is refused, never half-read.
  if ([...chars].some(isSurrogate)) return { kind: 'invalid', reason: 'MSH-2 uses a character outside the Basic Multilingual Plane as a delimiter' };
  if (new Set(chars).size !== chars.length) {
    // Seen in the field: `^~\\&`, a doubled escape character from a transcribed example. Repeats are
    // collapsed in order, so it reads as the standard `^~\&` rather than escape = subcomponent.
    chars = [...new Set(chars)].join('');
  }
  if (chars.length < 4 || chars.length > 5) return { kind: 'invalid', reason: `MSH-2 must hold 4 or 5 encoding characters, got ${chars.length}` };
  if (chars.includes(field) || /[A-Za-z0-9 ]/.test(chars)) return { kind: 'invalid', reason: 'MSH-2 encoding characters are not usable delimiters' };
  const [component, repetition, escape, subcomponent, truncation] = [...chars] as [string, string, string, string, string?];
  const delimiters: Delimiters = { field, component, repetition, escape, subcomponent };
  if (truncation !== undefined) delimiters.truncation = truncation;
  return { kind: 'delimiters', delimiters };
}

function isSurrogate(c: string): boolean {
  const code = c.charCodeAt(0);
  return code >= 0xd800 && code <= 0xdfff;
}

/** MSH-2 as this message's encoding characters would write it. */
export function encodingCharacters(d: Delimiters): string {
  return d.component + d.repetition + d.escape + d.subcomponent + (d.truncation ?? '');
}
