// The one rule for text an instrument's charset cannot carry (src/charset.ts).
import { describe, expect, test } from 'vitest';
import { carries, encodeChecked, fitToCharset } from '../src/charset.js';

describe('fitting text to an instrument charset', () => {
  test.each([
    ['Nováček', 'latin1', 'Novácek', 1],
    ['Ţuţuianu', 'latin1', 'Tutuianu', 2],
    ['Şahin', 'latin1', 'Sahin', 1],
    ['Wąsowski', 'latin1', 'Wasowski', 1],
    ['Łukasz Żółć', 'latin1', 'Lukasz Zólc', 4],
    ['Đorđević', 'latin1', 'Dordevic', 3],
    ['王 😀', 'latin1', '? ?', 2],
    ['ÄÖÜ ß é', 'latin1', 'ÄÖÜ ß é', 0],
    ['Nováček 王 😀', 'utf8', 'Nováček 王 😀', 0],
    ['a\ud800b\udc00', 'utf8', 'a?b?', 2],
    ['a\ud800b', 'latin1', 'a?b', 1],
    // A decomposition whose base is not a letter is no base letter: ≠ is = with a stroke.
    ['1\u22602', 'latin1', '1?2', 1],
  ] as const)('%s in %s → %s', (text, charset, fitted, substituted) => {
    expect(fitToCharset(text, charset)).toEqual({ text: fitted, substituted });
    expect(carries(fitted, charset)).toBe(true);
  });

  test('encoding is checked: a character the charset cannot carry is refused, never truncated to its low byte', () => {
    expect(encodeChecked('Nov\u00e1\u010dek', 'latin1')).toMatchObject({ kind: 'refused' });
    expect(encodeChecked('a\ud800', 'utf8')).toMatchObject({ kind: 'refused' });
    expect(encodeChecked('Novácek', 'latin1')).toEqual({ kind: 'encoded', bytes: Buffer.from('4e6f76e163656b', 'hex') });
  });
});
