// HL7 v2 escape sequences (HL7 v2.5.1 Chapter 2, 2.7 "Use of escape sequences in text fields").
// Unescaping happens on leaves only, after splitting, so an escaped delimiter never splits anything.
import type { Delimiters } from './delimiters.js';

/** Replaces \F\ \S\ \T\ \R\ \E\ \Xhh..\ (and drops \H\ \N\ highlighting) in one leaf value. */
export function unescapeText(text: string, d: Delimiters): string {
  if (!text.includes(d.escape)) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch !== d.escape) {
      out += ch;
      i += 1;
      continue;
    }
    const close = text.indexOf(d.escape, i + 1);
    if (close < 0) {
      // 2.7: an escape character with no closing one is data, not a sequence.
      out += text.slice(i);
      break;
    }
    out += expand(text.slice(i + 1, close), d) ?? text.slice(i, close + 1);
    i = close + 1;
  }
  return out;
}

function expand(seq: string, d: Delimiters): string | undefined {
  switch (seq) {
    case 'F':
      return d.field;
    case 'S':
      return d.component;
    case 'T':
      return d.subcomponent;
    case 'R':
      return d.repetition;
    case 'E':
      return d.escape;
    case 'P':
      return d.truncation ?? undefined;
    case 'H':
    case 'N':
      // 2.7.2: start/end highlighting carries no data.
      return '';
    case '.br':
      // 2.7.6: formatted-text line break.
      return '\n';
  }
  if (/^X(?:[0-9A-Fa-f]{2})+$/.test(seq)) return Buffer.from(seq.slice(1), 'hex').toString('latin1');
  return undefined;
}

/**
 * Escapes every delimiter in `text` so it travels as one leaf value (2.7.1), and every control character as hex data
 * (2.7.4 `\Xhh\`): a CR would end the segment, a VT or FS the MLLP block, and any other has no place in a message.
 */
export function escapeText(text: string, d: Delimiters): string {
  let out = '';
  for (const ch of text) {
    if (ch === d.escape) out += `${d.escape}E${d.escape}`;
    else if (ch === d.field) out += `${d.escape}F${d.escape}`;
    else if (ch === d.component) out += `${d.escape}S${d.escape}`;
    else if (ch === d.subcomponent) out += `${d.escape}T${d.escape}`;
    else if (ch === d.repetition) out += `${d.escape}R${d.escape}`;
    else if (d.truncation !== undefined && ch === d.truncation) out += `${d.escape}P${d.escape}`;
    else if (isControl(ch)) out += `${d.escape}X${ch.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}${d.escape}`;
    else out += ch;
  }
  return out;
}

/** C0 controls and DEL. */
export function isControl(ch: string): boolean {
  const code = ch.charCodeAt(0);
  return code < 0x20 || code === 0x7f;
}
