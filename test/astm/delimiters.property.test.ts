// LIS2-A2 7.1: whatever delimiter definition a sender writes in H.2 (the standard one, other characters, a doubled
// character, a missing escape, one too many, a repeat), every field decodes where the record says or the message is
// refused with its reason, and a QC run (H.12 = Q) is never loaded as patient results.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAstmText } from '../../drivers/astm/decode.js';
import { options, profile } from './profile.js';

// Characters a sender may pick as delimiters: ASCII punctuation (not the decimal point the value needs) and Latin-1 symbols.
const pool = [...'|\\^&!#$%*+,-/:;<=>?@[]_{}~\'"`()', '\u00a6', '\u00a7', '\u00b6', '\u00d7'];

const variants = {
  standard: (r: string, c: string, e: string) => `${r}${c}${e}`,
  doubledEscape: (r: string, c: string, e: string) => `${r}${c}${e}${e}`,
  doubledRepeat: (r: string, c: string, e: string) => `${r}${r}${c}${e}`,
  missingEscape: (r: string, c: string) => `${r}${c}`,
  oneTooMany: (r: string, c: string, e: string, x: string) => `${r}${c}${e}${x}`,
  repeatTwice: (r: string, c: string) => `${r}${c}${r}`,
  onlyRepeat: (r: string) => r,
  empty: () => '',
} as const;
type Variant = keyof typeof variants;
const readable: readonly Variant[] = ['standard', 'doubledEscape', 'doubledRepeat', 'missingEscape'];

const glucose = profile([{ code: 'GLU', loinc: '2345-7', unit: 'mmol' }]);

function message(f: string, r: string, c: string, e: string, x: string, variant: Variant, qc: boolean): Buffer {
  const definition = variants[variant](r, c, e, x);
  const header = ['H', definition, '', '', `XN${c}1`, '', '', '', '', '', '', qc ? 'Q' : 'P', '1', '20260701120000'].join(f);
  const order = ['O', '1', `A${e}S${e}1`].join(f);
  const result = ['R', '1', `${c}${c}${c}GLU`, '5.5', 'mmol', '', 'N', '', 'F', '', '', '', '20260701113015'].join(f);
  return Buffer.from([header, order, result, ['L', '1', 'N'].join(f)].join('\r') + '\r', 'latin1');
}

describe('H.2 delimiter definitions (property)', () => {
  it('each field decodes where the record says, or the message is refused; a QC mark is never lost', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...pool), { minLength: 5, maxLength: 5 }),
        fc.constantFrom(...(Object.keys(variants) as Variant[])),
        fc.boolean(),
        ([f, r, c, e, x], variant, qc) => {
          const decoded = decodeAstmText(message(f!, r!, c!, e!, x!, variant, qc), glucose, options());
          if (!readable.includes(variant)) {
            expect(decoded.results).toEqual([]);
            expect(decoded.rejections.map((j) => j.reason).join()).toMatch(/message not read: H.2 delimiter definition/);
            return;
          }
          expect(decoded.rejections).toEqual([]);
          expect(decoded.results).toHaveLength(1);
          const [result] = decoded.results;
          // With no escape declared, `&S&` is plain text: the accession is as sent.
          const accession = variant === 'missingEscape' ? `A${e}S${e}1` : `A${c}1`;
          expect(result).toMatchObject({ accession, analyteLoinc: '2345-7', value: 5.5, unit: 'mmol', status: 'final', qc });
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
