// HL7 v2 OBX-11 observation result status (Table 0085) → the laboratory's status. The code itself always travels
// with the result as `statusCode` (invariant 8). HL7's letters differ from LIS2-A2's: R is "entered, not verified",
// W is "posted as wrong", D deletes an earlier result.
import type { ResultStatus } from '../../src/result.js';
import { readStatusCode, type StatusReading } from '../../src/result-status.js';
import type { Hl7Options } from './options.js';

/** HL7 Table 0085 (v2.3 to v2.8); a code not listed here is `unknown` (loaded, never final). */
export const hl7StatusTable: Readonly<Record<string, ResultStatus>> = {
  F: 'final', // final results; can only be changed with a corrected result
  U: 'final', // results status change to final without retransmitting results already sent as preliminary
  V: 'final', // verified (v2.8)
  B: 'final', // appended report: final results reviewed, values unchanged (v2.8)
  C: 'correction', // record coming over is a correction and thus replaces a final result
  A: 'correction', // amended based on adjustments provided by the placer (v2.8)
  P: 'preliminary', // preliminary results
  R: 'preliminary', // results entered, not verified
  S: 'preliminary', // partial results
  I: 'preliminary', // specimen in lab; results pending
  X: 'cannot-be-done', // results cannot be obtained for this observation
  W: 'entered-in-error', // post original as wrong, e.g. transmitted for the wrong patient
  D: 'deleted', // deletes the OBX record
  N: 'unknown', // not asked: the observation was not sought
  O: 'unknown', // order detail description only (no result)
};

/** Reads OBX-11 as sent (whole field, unescaped). Empty: the instrument's `missingStatus`. */
export function readObxStatus(sent: string, missingStatus: Hl7Options['missingStatus']): StatusReading {
  return readStatusCode(sent, hl7StatusTable, missingStatus, 'OBX-11');
}
