// OBX-5 by OBX-2 (HL7 v2.5.1 Chapter 7 7.4.2; Chapter 2A NM and SN): a number only when exactly one was sent, a
// censored value with comparator and bound and no value, and a numeric field that holds no number rejected.
import { describe, expect, it } from 'vitest';
import { decodeHl7Message } from '../../drivers/hl7/message.js';
import { hl7Options } from '../../drivers/hl7/options.js';
import { mindrayBs } from './fixtures.js';

const first = (type: string, value: string) => {
  const payload = mindrayBs.payload.replace('OBX|1|NM|2|GLU|5.42|', `OBX|1|${type}|2|GLU|${value}|`);
  const d = decodeHl7Message(Buffer.from(payload, 'latin1'), mindrayBs.profile, hl7Options(mindrayBs.options)).decoded;
  return { result: d.results.find((r) => r.analyteLoinc === '2345-7'), rejection: d.rejections[0] };
};

describe('OBX-5 values', () => {
  it.each([
    ['NM', '5.42', { valueText: '5.42', value: 5.42, comparator: null, bound: null }],
    ['NM', '<0.5', { valueText: '<0.5', value: null, comparator: '<', bound: 0.5 }],
    ['NM', '***.*', { valueText: '***.*', value: null, comparator: null, bound: null }],
    ['NM', '', { valueText: '', value: null, comparator: null, bound: null }],
    ['SN', '<^0.5', { valueText: '<0.5', value: null, comparator: '<', bound: 0.5 }],
    ['SN', '>=^100', { valueText: '>=100', value: null, comparator: '>=', bound: 100 }],
    ['SN', '=^7.1', { valueText: '=7.1', value: 7.1, comparator: null, bound: null }],
    ['SN', '^7.1', { valueText: '7.1', value: 7.1, comparator: null, bound: null }],
    ['SN', '^1^:^128', { valueText: '1:128', value: null, comparator: null, bound: null }],
    ['SN', '^5^-^10', { valueText: '5-10', value: null, comparator: null, bound: null }],
    ['ST', 'POS', { valueText: 'POS', value: null, comparator: null, bound: null }],
    ['ST', '>2000', { valueText: '>2000', value: null, comparator: '>', bound: 2000 }],
  ])('%s %j', (type, value, expected) => {
    const { result, rejection } = first(type, value);
    expect(rejection).toBeUndefined();
    expect(result).toMatchObject(expected);
  });

  it.each([
    ['NM', 'POS', /OBX-5 'POS' is not a number \(OBX-2 NM\)/],
    ['NM', '5,42', /OBX-5 '5,42' is not a number/],
    ['NM', '9'.repeat(400), /is not a number \(OBX-2 NM\): longer than 64 characters/],
    ['NM', '1e999', /too large to be a number/],
    ['SN', '!^5', /comparator '!'/],
    ['SN', '<^abc', /num1 'abc' is not a number/],
    ['SN', '^1^x^2', /separator 'x'/],
  ])('%s %j is rejected with its reason, not forwarded as text', (type, value, reason) => {
    const { result, rejection } = first(type, value);
    expect(result).toBeUndefined();
    expect(rejection?.reason).toMatch(reason);
  });
});
