// LIS2-A2 R.9 result status → the laboratory's status. The letter itself always travels with the result as
// `statusCode` (invariant 8); this table decides only what labgate may claim about it.
import type { ResultStatus } from '../../src/result.js';
import { readStatusCode, type StatusReading } from '../../src/result-status.js';
import type { AstmOptions } from './options.js';

/** LIS2-A2 (E1394) R.9 result status codes; a letter not listed here is `unknown` (loaded, never final). */
export const astmStatusTable: Readonly<Record<string, ResultStatus>> = {
  F: 'final', // final results
  R: 'final', // this result was previously transmitted: a resend of a final result
  V: 'final', // operator verified/approved result
  C: 'correction', // correction of previously transmitted results
  P: 'preliminary', // preliminary results
  S: 'preliminary', // partial results
  I: 'preliminary', // in instrument, results pending
  W: 'preliminary', // warning: validity is questionable; loaded for a person to see, never as final
  X: 'cannot-be-done', // order cannot be done
  M: 'unknown', // this result is an MIC level: says nothing of finality
  N: 'unknown', // the record carries what a new order needs
  Q: 'unknown', // a response to an outstanding query
};

/**
 * Reads R.9 as sent (whole field, unescaped). Empty: the instrument's `emptyStatus`. Anything outside the table,
 * or more than one letter, is kept and loaded as `unknown`.
 */
export function readAstmStatus(sent: string, emptyStatus: AstmOptions['emptyStatus']): StatusReading {
  return readStatusCode(sent, astmStatusTable, emptyStatus, 'R.9 result');
}
