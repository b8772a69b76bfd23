// The LOINC a mapping form takes: the Users' Guide's Mod 10 check digit, local X codes, and the suggestions table.
import { describe, expect, it } from 'vitest';
import { suggestedLoincs, suggestLoinc } from '../../src/config/analyte-suggestions.js';
import { loincCheckDigit, readLoinc } from '../../src/config/loinc.js';

describe('LOINC check digits', () => {
  it("computes the Users' Guide example and real codes", () => {
    expect(loincCheckDigit('12345')).toBe(5);
    for (const code of ['2345-7', '14749-6', '718-7', '2823-3', '6690-2', '1-8', '10000-8']) expect(readLoinc(code), code).toEqual({ kind: 'loinc', code });
  });

  it('refuses a wrong check digit, swapped digits and anything not shaped like a LOINC, saying what it expected', () => {
    expect(readLoinc('2345-8')).toEqual({ kind: 'invalid', reason: '2345-8 is not a LOINC: its check digit should be 7 (2345-7); check for a typing slip' });
    expect(readLoinc('2435-7').kind).toBe('invalid');
    expect(readLoinc('14794-6').kind).toBe('invalid');
    // The deprecated codes the Users' Guide lists with invalid check digits are refused like any slip.
    expect(readLoinc('5895-7').kind).toBe('invalid');
    for (const text of ['', ' ', '2345', '2345-77', 'LP1234-5', '12345678-9', '2345-7\ninjected: true', '<b>2345-7</b>']) {
      expect(readLoinc(text).kind, JSON.stringify(text)).toBe('invalid');
    }
    expect(readLoinc('')).toEqual({ kind: 'invalid', reason: 'enter the LOINC (such as 2345-7)' });
  });

  it('takes a local X code for an analyte LOINC has none for', () => {
    expect(readLoinc(' X-SYSMEX-ANEMIA ')).toEqual({ kind: 'local', code: 'X-SYSMEX-ANEMIA' });
    expect(readLoinc('X').kind).toBe('invalid');
    expect(readLoinc('X-a b').kind).toBe('invalid');
  });
});

describe('LOINC suggestions', () => {
  it('suggests only from an exact code and an exact unit, with the name that says the specimen', () => {
    expect(suggestLoinc('GLU', 'mmol/L')).toEqual({ loinc: '14749-6', name: 'Glucose [Moles/volume] in Serum or Plasma' });
    expect(suggestLoinc('glu', 'mg/dL')).toEqual({ loinc: '2345-7', name: 'Glucose [Mass/volume] in Serum or Plasma' });
    expect(suggestLoinc('CREA', 'umol/L')?.loinc).toBe('14682-9');
    expect(suggestLoinc('GLU', 'MG/DL')).toBeNull();
    expect(suggestLoinc('GLU', null)).toBeNull();
    expect(suggestLoinc('GLU2', 'mmol/L')).toBeNull();
    expect(suggestLoinc('UGLU', 'mg/dL')).toBeNull();
  });

  it('suggests only codes whose check digit holds', () => {
    for (const code of suggestedLoincs()) expect(readLoinc(code), code).toEqual({ kind: 'loinc', code });
  });
});
