// OBX-5 by OBX-2 value type (HL7 v2.5.1 Chapter 7, 7.4.2.2 and 7.4.2.5; Chapter 2A for NM, SN, CE, CWE). Numbers are
// read by the one value reader (src/result-value.ts), so a censored `<0.5` has no value here either.
import { fieldsOf, readValue, type ValueFields, type ValueReading } from '../../src/result-value.js';
import type { Delimiters } from './delimiters.js';
import { unescapeText } from './escape.js';
import { componentsOf, rawField, repetitionsOf, type Segment } from './parse.js';

/** What OBX-5 says, in the keyed result's terms. */
export interface ObxValue extends ValueFields {
  valueText: string;
}

export type ObxValueReading = { kind: 'value'; value: ObxValue } | { kind: 'rejected'; reason: string };

/** OBX-5 interpreted per OBX-2; unknown types are read as text. */
export function readObxValue(obx: Segment, d: Delimiters, valueType: string): ObxValueReading {
  const reps = repetitionsOf(rawField(obx, 5), d);
  const comps = componentsOf(reps[0] ?? '', d).map((c) => unescapeText(c, d));
  switch (valueType) {
    case 'SN':
      return structuredNumeric(comps);
    case 'CE':
    case 'CWE':
    case 'CNE':
    case 'CF': {
      // Qualitative: the code when sent, else its text (Chapter 2A, CE and CWE).
      const valueText = comps[0] !== '' && comps[0] !== undefined ? comps[0] : (comps[1] ?? '');
      return value(valueText, { kind: 'empty' });
    }
    case 'NM':
      return numeric(
        reps
          .filter((r) => r !== '')
          .map((r) => unescapeText(r, d))
          .join('\n'),
      );
    default: {
      // Repetitions (text lines, Chapter 7 7.4.2.5) become lines; empty ones carry nothing.
      const valueText = reps
        .filter((r) => r !== '')
        .map((r) => unescapeText(r, d))
        .join('\n');
      return value(valueText, readValue(valueText));
    }
  }
}

function value(valueText: string, reading: ValueReading): ObxValueReading {
  return { kind: 'value', value: { valueText, ...fieldsOf(reading) } };
}

// Chapter 2A, NM: an optional sign, digits and a decimal point. A censored `<0.5` sent as NM is read as SN would be;
// a masked `***.*` (the analyzer withheld the number) stays text without a value; anything else is not a number,
// and a result whose numeric field cannot be read is rejected rather than forwarded as text.
function numeric(valueText: string): ObxValueReading {
  const reading = readValue(valueText);
  if (reading.kind === 'text') return { kind: 'rejected', reason: `OBX-5 '${excerpt(valueText)}' is not a number (OBX-2 NM): ${reading.reason}` };
  return value(valueText, reading);
}

const snComparators = ['', '=', '<', '>', '<=', '>=', '<>'];
const snSeparators = ['', '-', '+', '/', '.', ':'];

// Chapter 2A, SN (structured numeric): <comparator> ^ <num1> ^ <separator/suffix> ^ <num2>. `<^0.5` is a censored 0.5;
// `^1^:^128` a ratio and `^5^-^10` a range, which have no single value. Parts that are not what SN allows reject it.
function structuredNumeric(comps: string[]): ObxValueReading {
  const [cmp = '', num1 = '', sep = '', num2 = ''] = comps.map((c) => c.trim());
  const valueText = `${cmp}${num1}${sep}${num2}`;
  const bad = (what: string): ObxValueReading => ({ kind: 'rejected', reason: `OBX-5 (OBX-2 SN) ${what}` });
  if (!snComparators.includes(cmp)) return bad(`comparator '${excerpt(cmp)}' is not one of ${snComparators.slice(1).join(' ')}`);
  if (!snSeparators.includes(sep)) return bad(`separator '${excerpt(sep)}' is not one of ${snSeparators.slice(1).join(' ')}`);
  const first = readValue(num1);
  const second = readValue(num2);
  if (first.kind !== 'exact' && first.kind !== 'empty') return bad(`num1 '${excerpt(num1)}' is not a number`);
  if (second.kind !== 'exact' && second.kind !== 'empty') return bad(`num2 '${excerpt(num2)}' is not a number`);
  if (first.kind !== 'exact' || sep !== '' || num2 !== '' || cmp === '<>') return value(valueText, { kind: 'empty' });
  if (cmp === '' || cmp === '=') return value(valueText, first);
  return value(valueText, { kind: 'censored', comparator: cmp as '<' | '>' | '<=' | '>=', bound: first.value });
}

// Enough of a value to recognise it in a rejection, never the whole of a long one.
function excerpt(text: string): string {
  return text.length > 24 ? `${text.slice(0, 24)}…` : text;
}
