// Escaping by construction: every value interpolated into `html` is escaped unless it is already SafeHtml,
// so a hostile accession or reason from an analyzer can never become markup, nor read as something it is not.

/** Markup that is already safe to emit. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Interpolated = SafeHtml | string | number | boolean | null | undefined | readonly Interpolated[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

// Characters that change how text around them reads without showing themselves: C0 and C1 controls, bidirectional
// embeddings, overrides and isolates (Unicode UAX #9; U+202E turns `5.1` into what reads as `1.5`), zero-width and
// other invisible characters, line and paragraph separators. An analyzer's value must read as what it is.
// eslint-disable-next-line no-control-regex, no-misleading-character-class -- these characters are what it finds
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\ufff9-\ufffb]/g;

/** Shows an invisible or direction-changing character as its code, `\u202E`. */
export function showInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

/** Escapes text for element content and quoted attribute values; invisible characters show as their codes. */
export function escapeHtml(text: string): string {
  return showInvisible(text).replace(/[&<>"'`]/g, (c) => ENTITIES[c] ?? c);
}

function piece(value: Interpolated): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((v: Interpolated) => piece(v)).join('');
  return escapeHtml(String(value));
}

/** Tagged template: literal parts are trusted, every interpolated value is escaped (arrays are joined). */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += piece(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}
