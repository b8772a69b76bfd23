import { describe, expect, test } from 'vitest';
import { readDelimiters } from '../../drivers/hl7/delimiters.js';
import { escapeText, unescapeText } from '../../drivers/hl7/escape.js';
import { holdsParts, parseMessage, repeatedValues, valueAt, type Hl7Message } from '../../drivers/hl7/parse.js';

const parsed = (text: string): Hl7Message => {
  const r = parseMessage(text);
  if (r.kind !== 'message') throw new Error(r.reason);
  return r.message;
};

describe('delimiters come from MSH-1 and MSH-2', () => {
  test('standard', () => {
    expect(readDelimiters('MSH|^~\\&|A')).toEqual({
      kind: 'delimiters',
      delimiters: { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' },
    });
  });
  test('v2.7 truncation character', () => {
    expect(readDelimiters('MSH|^~\\&#|A')).toMatchObject({ delimiters: { truncation: '#' } });
  });
  test('unusual delimiters are honored, never assumed', () => {
    const m = parsed('MSH*!@$%*APP*FAC\rOBX*1*CE*A!B@c!d%e\\F*');
    const obx = m.segments[1]!;
    expect(m.delimiters).toEqual({ field: '*', component: '!', repetition: '@', escape: '$', subcomponent: '%' });
    expect(valueAt(obx, m.delimiters, { field: 3, component: 2, subcomponent: 1 })).toBe('B');
    expect(valueAt(obx, m.delimiters, { field: 3, component: 1, subcomponent: 1, repetition: 1 })).toBe('c');
    expect(valueAt(obx, m.delimiters, { field: 3, component: 2, subcomponent: 2, repetition: 1 })).toBe('e\\F');
    expect(valueAt(obx, m.delimiters, { field: 3, component: 2, subcomponent: 1, repetition: 1 })).toBe('d');
    expect(valueAt(m.segments[0]!, m.delimiters, { field: 3, component: 1, subcomponent: 1 })).toBe('APP');
  });
  test('a doubled escape character (`^~\\\\&`) is collapsed rather than read as escape = subcomponent', () => {
    expect(readDelimiters('MSH|^~\\\\&|A')).toMatchObject({ delimiters: { escape: '\\', subcomponent: '&' } });
  });
  test.each([
    ['MSH', /does not start/],
    ['PID|1||x', /does not start/],
    ['MSHA^~\\&', /not a delimiter/],
    ['MSH|^~|ABC', /4 or 5/],
    ['MSH|^~\\A|', /not usable/],
  ])('%s is invalid', (text, reason) => {
    expect(readDelimiters(text)).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(reason) });
  });
});

describe('segments and fields', () => {
  test('CR, LF and CRLF all end segments; MSH field numbers count MSH-1', () => {
    for (const sep of ['\r', '\n', '\r\n']) {
      const m = parsed(['MSH|^~\\&|APP|FAC|||20240101||ORU^R01|42|P|2.5', 'OBX|1|NM|GLU'].join(sep) + sep);
      expect(m.segments.map((s) => s.id)).toEqual(['MSH', 'OBX']);
      expect(valueAt(m.segments[0]!, m.delimiters, { field: 10, component: 1, subcomponent: 1 })).toBe('42');
      expect(valueAt(m.segments[0]!, m.delimiters, { field: 9, component: 2, subcomponent: 1 })).toBe('R01');
      expect(valueAt(m.segments[0]!, m.delimiters, { field: 1, component: 1, subcomponent: 1 })).toBe('|');
    }
  });
  test('repetitions keep their empty members', () => {
    const m = parsed('MSH|^~\\&\rOBX|1|NM|X||1|||~N|');
    expect(repeatedValues(m.segments[1]!, m.delimiters, 8)).toEqual(['', 'N']);
  });
  test('a bad segment id makes the message invalid', () => {
    expect(parseMessage('MSH|^~\\&\rxx|1')).toMatchObject({ kind: 'invalid' });
  });
  test('a location reads the whole field, a whole component or one subcomponent', () => {
    const m = parsed('MSH|^~\\&\rSPM|1|PL-1&LIS^ACC-7\\S\\2&LAB~REP-2|');
    const spm = m.segments[1]!;
    expect(valueAt(spm, m.delimiters, { field: 2 })).toBe('PL-1&LIS^ACC-7^2&LAB');
    expect(valueAt(spm, m.delimiters, { field: 2, component: 2 })).toBe('ACC-7^2&LAB');
    expect(valueAt(spm, m.delimiters, { field: 2, component: 2, subcomponent: 1 })).toBe('ACC-7^2');
    expect(valueAt(spm, m.delimiters, { field: 2, repetition: 1 })).toBe('REP-2');
    expect(holdsParts(spm, m.delimiters, { field: 2 })).toBe(true);
    expect(holdsParts(spm, m.delimiters, { field: 2, component: 2 })).toBe(true);
    expect(holdsParts(spm, m.delimiters, { field: 2, component: 2, subcomponent: 1 })).toBe(false);
    expect(holdsParts(spm, m.delimiters, { field: 1 })).toBe(false);
  });
});

describe('escape sequences (2.7)', () => {
  const d = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };
  test.each([
    ['a\\F\\b', 'a|b'],
    ['a\\S\\b', 'a^b'],
    ['a\\T\\b', 'a&b'],
    ['a\\R\\b', 'a~b'],
    ['a\\E\\b', 'a\\b'],
    ['\\X41\\\\X4243\\', 'ABC'],
    ['\\H\\bold\\N\\', 'bold'],
    ['line\\.br\\next', 'line\nnext'],
    ['\\Zvendor\\', '\\Zvendor\\'],
    ['lonely \\ escape', 'lonely \\ escape'],
  ])('%s', (raw, text) => {
    expect(unescapeText(raw, d)).toBe(text);
  });
  test('escaping then unescaping gives the text back', () => {
    const text = 'a|b^c&d~e\\f\rg';
    expect(unescapeText(escapeText(text, d), d)).toBe(text);
  });
});
