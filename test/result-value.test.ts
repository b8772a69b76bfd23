// The one value reader of every driver: what is a number, what is censored, what stays text (invariant 8).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fieldsOf, MAX_NUMERIC_LENGTH, readValue, valueFields } from '../src/result-value.js';
import { keyedResultSchema } from '../src/result.js';
import { potassium } from './fixtures/results.js';

describe('readValue', () => {
  it.each([
    ['5.5', { kind: 'exact', value: 5.5 }],
    ['  12 ', { kind: 'exact', value: 12 }],
    ['-0.25', { kind: 'exact', value: -0.25 }],
    ['+3', { kind: 'exact', value: 3 }],
    ['.5', { kind: 'exact', value: 0.5 }],
    ['7.', { kind: 'exact', value: 7 }],
    ['007', { kind: 'exact', value: 7 }],
    ['1e3', { kind: 'exact', value: 1000 }],
    ['1.2E+06', { kind: 'exact', value: 1_200_000 }],
    ['<0.5', { kind: 'censored', comparator: '<', bound: 0.5 }],
    ['> 2000', { kind: 'censored', comparator: '>', bound: 2000 }],
    ['<=10', { kind: 'censored', comparator: '<=', bound: 10 }],
    ['>=1e2', { kind: 'censored', comparator: '>=', bound: 100 }],
    ['', { kind: 'empty' }],
    ['   ', { kind: 'empty' }],
    ['***.*', { kind: 'masked' }],
    ['----', { kind: 'masked' }],
    ['++++', { kind: 'masked' }],
  ])('%j', (text, reading) => {
    expect(readValue(text)).toEqual(reading);
  });

  it.each(['POS', 'Negative', '1:128', '5-10', '1,5', '12.5 H', '0x1F', 'Infinity', 'NaN', '1e', 'e5', '.', '=5', '<>5', '< <5', '1..2', '1e3.5', '--5'])(
    '%j is text',
    (text) => {
      expect(readValue(text).kind).toBe('text');
      expect(valueFields(text)).toEqual({ value: null, comparator: null, bound: null });
    },
  );

  it('keeps numbers it cannot represent as text: too large, too small, too long', () => {
    expect(readValue('1e400')).toEqual({ kind: 'text', reason: 'too large to be a number' });
    expect(readValue('1e-400')).toEqual({ kind: 'text', reason: 'too small to be a number' });
    expect(readValue('0e-400')).toEqual({ kind: 'exact', value: 0 });
    expect(readValue('9'.repeat(309)).kind).toBe('text');
    expect(readValue('1'.repeat(MAX_NUMERIC_LENGTH))).toMatchObject({ kind: 'exact' });
    expect(readValue('1'.repeat(MAX_NUMERIC_LENGTH + 1))).toEqual({ kind: 'text', reason: `longer than ${MAX_NUMERIC_LENGTH} characters` });
  });

  it('a censored value is never a number: value null, comparator and bound apart', () => {
    expect(valueFields('<0.5')).toEqual({ value: null, comparator: '<', bound: 0.5 });
    expect(valueFields('5.5')).toEqual({ value: 5.5, comparator: null, bound: null });
  });
});

describe('readValue properties', () => {
  const comparator = fc.constantFrom('<', '>', '<=', '>=');
  const finite = fc.double({ noNaN: true, noDefaultInfinity: true });

  it('every finite number JavaScript writes reads back as itself', () => {
    fc.assert(
      fc.property(finite, (x) => {
        const r = readValue(String(x));
        expect(r).toEqual({ kind: 'exact', value: x === 0 ? 0 : x });
      }),
    );
  });

  it('a comparator before any number makes it censored, and its fields carry no value', () => {
    fc.assert(
      fc.property(comparator, fc.constantFrom('', ' '), finite, (c, space, x) => {
        const r = readValue(`${c}${space}${String(x)}`);
        expect(r).toEqual({ kind: 'censored', comparator: c, bound: x === 0 ? 0 : x });
        expect(fieldsOf(r).value).toBeNull();
      }),
    );
  });

  it('on any text it never throws, never yields NaN or Infinity, and agrees with Number() when it reads a number', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[<>=+\-.eE0-9 *]{0,12}$/)), (text) => {
        const r = readValue(text);
        const f = fieldsOf(r);
        for (const n of [f.value, f.bound]) if (n !== null) expect(Number.isFinite(n)).toBe(true);
        if (r.kind === 'exact') expect(r.value).toBe(Number(text.trim()));
        if (r.kind === 'censored') expect(f.value).toBeNull();
      }),
      { numRuns: 2_000 },
    );
  });

  it('a letter anywhere but an exponent keeps a value text', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,8}$/), fc.constantFrom('a', 'x', 'O', 'l', 'H', 'I'), fc.nat(8), (digits, letter, at) => {
        const i = Math.min(at, digits.length);
        expect(readValue(digits.slice(0, i) + letter + digits.slice(i)).kind).toBe('text');
      }),
    );
  });
});

describe('keyed result', () => {
  it('refuses a censored value that carries a number, and a comparator without a bound', () => {
    expect(keyedResultSchema.safeParse(potassium('A1', { valueText: '<0.5', value: 0.5, comparator: '<', bound: 0.5 })).success).toBe(false);
    expect(keyedResultSchema.safeParse(potassium('A1', { valueText: '<0.5', value: null, comparator: '<', bound: null })).success).toBe(false);
    expect(keyedResultSchema.safeParse(potassium('A1', { valueText: '4.1', value: 4.1, comparator: null, bound: 4.1 })).success).toBe(false);
    expect(keyedResultSchema.safeParse(potassium('A1', { valueText: '<0.5', value: null, comparator: '<', bound: 0.5 })).success).toBe(true);
  });

  it('refuses an accession of only control or format characters', () => {
    for (const accession of ['\u0000', '\u0000\u0000', '\u0001\u001f', '\u007f', ' \u0085 ', '\u200b']) {
      expect(keyedResultSchema.safeParse(potassium(accession)).success, JSON.stringify(accession)).toBe(false);
    }
    expect(keyedResultSchema.safeParse(potassium('A\u0000')).success).toBe(true);
  });

  it('keeps the status letter beside the status', () => {
    expect(keyedResultSchema.parse(potassium('A1', { status: 'entered-in-error', statusCode: 'W' }))).toMatchObject({
      status: 'entered-in-error',
      statusCode: 'W',
    });
  });
});
