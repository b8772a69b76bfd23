// An analyzer's test code and the components of a universal test ID (LIS2-A2 R.3, O.5, Q.5: `^^^code`), both ways:
// reading the code the mapping is keyed on from a field's components, and writing an order's code back into them.
// One rule for results, queries and orders, so a code read from a result is the code an order is sent with.
import type { AstmOptions } from './options.js';

/** The options that say where the code is. */
export type CodeOptions = Pick<AstmOptions, 'codeComponents' | 'codePick' | 'codeJoin'>;

/**
 * The code from a universal test ID's components, each trimmed: the configured components joined by `codeJoin` with
 * trailing empties dropped, or the first non-empty one (`codePick: first-non-empty`).
 */
export function codeFromComponents(all: readonly string[], options: CodeOptions): string {
  const picked = options.codeComponents.map((c) => (all[c - 1] ?? '').trim());
  if (options.codePick === 'first-non-empty') return picked.find((c) => c !== '') ?? '';
  while (picked.length > 0 && picked[picked.length - 1] === '') picked.pop();
  return picked.join(options.codeJoin);
}

/**
 * The components of a universal test ID that carry `code` (inverse of codeFromComponents): a joined code is split on
 * `codeJoin` into the configured components in order; a first-non-empty code goes into the first configured one.
 */
export function componentsForCode(code: string, options: CodeOptions): string[] {
  const parts = options.codePick === 'joined' ? code.split(options.codeJoin) : [code];
  const out: string[] = [];
  options.codeComponents.slice(0, parts.length).forEach((position, i) => {
    while (out.length < position) out.push('');
    out[position - 1] = parts[i]!;
  });
  // More parts than configured components: the rest follow the last one, so nothing of the code is lost.
  if (parts.length > options.codeComponents.length) out.push(...parts.slice(options.codeComponents.length));
  return out;
}
