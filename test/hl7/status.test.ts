// HL7 v2 OBX-11 (Table 0085), code by code: each result is loaded with its code; HL7's letters are not LIS2-A2's
// (R is "entered, not verified", W "posted as wrong", D deletes), and none is rejected for its status alone.
import { describe, expect, it } from 'vitest';
import { decodeHl7Message } from '../../drivers/hl7/message.js';
import { hl7Options } from '../../drivers/hl7/options.js';
import { hl7StatusTable, readObxStatus } from '../../drivers/hl7/status.js';
import { mindrayBs } from './fixtures.js';

const withStatus = (code: string) =>
  decodeHl7Message(Buffer.from(mindrayBs.payload.replace('|N|||F||5.42|', `|N|||${code}||5.42|`), 'latin1'), mindrayBs.profile, hl7Options(mindrayBs.options))
    .decoded;

describe('HL7 OBX-11 observation result status', () => {
  it.each([
    ['A', 'correction'], // amended based on adjustments provided by the placer (v2.8)
    ['B', 'final'], // appended report, values unchanged (v2.8)
    ['C', 'correction'], // a correction replacing a final result
    ['D', 'deleted'], // deletes the OBX record
    ['F', 'final'], // final results
    ['I', 'preliminary'], // specimen in lab; results pending
    ['N', 'unknown'], // not asked
    ['O', 'unknown'], // order detail description only
    ['P', 'preliminary'], // preliminary results
    ['R', 'preliminary'], // results entered, not verified
    ['S', 'preliminary'], // partial results
    ['U', 'final'], // status changed to final without retransmitting results
    ['V', 'final'], // verified (v2.8)
    ['W', 'entered-in-error'], // post original as wrong
    ['X', 'cannot-be-done'], // results cannot be obtained
  ])('%s is loaded as %s with its code', (code, status) => {
    expect(hl7StatusTable[code]).toBe(status);
    const d = withStatus(code);
    expect(d.rejections).toEqual([]);
    expect(d.results[0]).toMatchObject({ status, statusCode: code, valueText: '5.42' });
  });

  it('a code outside the table is loaded as unknown, never final, and kept as sent', () => {
    expect(withStatus('Q').results[0]).toMatchObject({ status: 'unknown', statusCode: 'Q' });
    expect(withStatus('ZZ').results[0]).toMatchObject({ status: 'unknown', statusCode: 'ZZ' });
  });

  it('an empty OBX-11 follows missingStatus and has no code', () => {
    expect(readObxStatus('', 'final')).toEqual({ kind: 'status', status: 'final', statusCode: null });
    expect(readObxStatus(' ', 'reject')).toEqual({ kind: 'rejected', reason: 'OBX-11 status is empty' });
  });
});
