// LIS2-A2 R.9 result status, letter by letter as the standard lists them: each result is loaded with its letter, and
// the normalized status never claims more than the letter says (W, warning: validity questionable, is never final).
import { describe, expect, it } from 'vitest';
import { decodeAstmText } from '../../drivers/astm/decode.js';
import { astmStatusTable, readAstmStatus } from '../../drivers/astm/status.js';
import { options, profile } from './profile.js';

const H = 'H|\\^&|||cobas^1|||||||P|1|20260701120000';
const decodeStatus = (code: string) =>
  decodeAstmText(
    Buffer.from([H, 'O|1|A1', `R|1|^^^GLU|5.5|mmol/L||N||${code}||||20260701113015`, 'L|1'].join('\r') + '\r', 'latin1'),
    profile([{ code: 'GLU', loinc: '2345-7' }]),
    options(),
  );

describe('LIS2-A2 R.9 result status', () => {
  it.each([
    ['C', 'correction'], // correction of previously transmitted results
    ['P', 'preliminary'], // preliminary results
    ['F', 'final'], // final results
    ['X', 'cannot-be-done'], // order cannot be done
    ['I', 'preliminary'], // in instrument, results pending
    ['S', 'preliminary'], // partial results
    ['M', 'unknown'], // this result is an MIC level
    ['R', 'final'], // this result was previously transmitted
    ['N', 'unknown'], // the record carries what a new order needs
    ['Q', 'unknown'], // a response to an outstanding query
    ['V', 'final'], // operator verified/approved result
    ['W', 'preliminary'], // warning: validity is questionable
  ])('%s is loaded as %s with its letter', (code, status) => {
    expect(astmStatusTable[code]).toBe(status);
    const d = decodeStatus(code);
    expect(d.rejections).toEqual([]);
    expect(d.results[0]).toMatchObject({ status, statusCode: code, value: 5.5 });
  });

  it('a questionable result (W) from a haematology analyzer is loaded, never as final', () => {
    const [result] = decodeStatus('W').results;
    expect(result?.status).not.toBe('final');
  });

  it('a letter outside the table, or more than one letter, is loaded as unknown and kept as sent', () => {
    expect(decodeStatus('Z').results[0]).toMatchObject({ status: 'unknown', statusCode: 'Z' });
    expect(decodeStatus('F\\W').results[0]).toMatchObject({ status: 'unknown', statusCode: 'F\\W' });
    expect(decodeStatus('f').results[0]).toMatchObject({ status: 'final', statusCode: 'f' });
  });

  it('an empty R.9 follows emptyStatus and has no letter', () => {
    expect(readAstmStatus('  ', 'final')).toEqual({ kind: 'status', status: 'final', statusCode: null });
    expect(readAstmStatus('', 'preliminary')).toEqual({ kind: 'status', status: 'preliminary', statusCode: null });
    expect(readAstmStatus('', 'reject')).toEqual({ kind: 'rejected', reason: 'R.9 result status is empty' });
  });
});
