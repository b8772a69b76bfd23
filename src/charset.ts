// Text written to an instrument, in the instrument's charset (ARCHITECTURE.md invariant 10). A character the charset
// cannot carry is replaced by a documented substitute before any byte is made: `Buffer.from(s, 'latin1')` would keep
// only the low byte of each UTF-16 unit, so U+010D (č) became CR and U+017C (ż) became `|`. The protocol encoders
// (drivers/astm/encode.ts, drivers/hl7/encode.ts) fit every value with this, escape it, and check the bytes after.

/** The charsets an instrument is configured with (after `auto` is resolved for the message being answered). */
export type Charset = 'latin1' | 'utf8';

/** A value fitted to a charset, and how many of its characters were replaced. */
export interface Fitted {
  text: string;
  substituted: number;
}

/** What replaces a character the charset cannot carry and that has no base letter the charset holds. */
export const SUBSTITUTE = '?';

// Letters that Unicode does not decompose into a base letter and a mark, yet read as one to a laboratory (Polish ł,
// Croatian đ, Turkish dotless ı, Maltese ħ, Sami ŧ).
const plainLetters = new Map([
  ['ł', 'l'],
  ['Ł', 'L'],
  ['đ', 'd'],
  ['Đ', 'D'],
  ['ı', 'i'],
  ['ħ', 'h'],
  ['Ħ', 'H'],
  ['ŧ', 't'],
  ['Ŧ', 'T'],
]);

const combiningMark = /^\p{M}+$/u;
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when every character of `text` travels in `charset` as itself. */
export function carries(text: string, charset: Charset): boolean {
  // eslint-disable-next-line no-control-regex
  return charset === 'latin1' ? /^[\u0000-\u00ff]*$/.test(text) : !loneSurrogate.test(text);
}

/**
 * `text` with each character `charset` cannot carry replaced: a letter with marks (č, ş, ą, ţ) by its base letter when
 * the charset holds it (c, s, a, t), the few letters in `plainLetters` by theirs, anything else (a Chinese character, an
 * emoji in Latin-1, half of a surrogate pair) by `?`. UTF-8 carries every character but a lone surrogate.
 */
export function fitToCharset(text: string, charset: Charset): Fitted {
  if (carries(text, charset)) return { text, substituted: 0 };
  let out = '';
  let substituted = 0;
  for (const ch of text) {
    if (carries(ch, charset)) {
      out += ch;
      continue;
    }
    substituted += 1;
    out += baseLetter(ch, charset) ?? SUBSTITUTE;
  }
  return { text: out, substituted };
}

function baseLetter(ch: string, charset: Charset): string | undefined {
  const plain = plainLetters.get(ch);
  if (plain !== undefined) return plain;
  const [base, ...marks] = ch.normalize('NFD');
  if (base === undefined || marks.length === 0 || !combiningMark.test(marks.join('')) || !carries(base, charset)) return undefined;
  // A decomposition may end in a control or format character only in theory; a base letter is what is wanted here.
  return /\p{L}/u.test(base) ? base : undefined;
}

/** The bytes of `text` in `charset`, or why they cannot be sent: a character it cannot carry reached this point. */
export function encodeChecked(text: string, charset: Charset): { kind: 'encoded'; bytes: Buffer } | { kind: 'refused'; reason: string } {
  const bytes = Buffer.from(text, charset);
  // Read back: a character that was truncated or replaced by the encoder comes back different.
  if (!carries(text, charset) || bytes.toString(charset) !== text) return { kind: 'refused', reason: `text not representable in ${charset}` };
  return { kind: 'encoded', bytes };
}
