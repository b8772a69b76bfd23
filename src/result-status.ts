// The one rule every driver applies to an analyzer's status letter (ARCHITECTURE.md invariant 8): the letter travels
// with the result as sent, a table per protocol decides what labgate may claim about it, and a letter outside the
// table is `unknown`: loaded, never final, never a reason to reject the result.
import type { ResultStatus } from './result.js';

/** What a status field says: the normalized status and the letter as sent, or why the result cannot be loaded. */
export type StatusReading = { kind: 'status'; status: ResultStatus; statusCode: string | null } | { kind: 'rejected'; reason: string };

/**
 * Reads a status field (whole, unescaped) by `table` (keyed by upper-case letter). An empty field is `whenEmpty`
 * with no letter, or a rejection naming `field` when the instrument is configured to reject it.
 */
export function readStatusCode(
  sent: string,
  table: Readonly<Record<string, ResultStatus>>,
  whenEmpty: 'final' | 'preliminary' | 'reject',
  field: string,
): StatusReading {
  const code = sent.trim();
  if (code === '') {
    return whenEmpty === 'reject' ? { kind: 'rejected', reason: `${field} status is empty` } : { kind: 'status', status: whenEmpty, statusCode: null };
  }
  return { kind: 'status', status: table[code.toUpperCase()] ?? 'unknown', statusCode: code };
}
