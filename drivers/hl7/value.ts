// OBX-5 by OBX-2 value type (HL7 v2.5.1 Chapter 7, 7.4.2.2 and 7.4.2.5; Chapter 2A for NM, SN, CE, CWE)
// and OBX-11 by HL7 Table 0085.
import type { Comparator, ResultStatus } from '../../src/result.js';
import type { Delimiters } from './delimiters.js';
import { unescapeText } from './escape.js';
import { componentsOf, rawField, repetitionsOf, type Segment } from './parse.js';

/** What OBX-5 says, in the keyed result's terms. */
export interface ObxValue {
  valueText: string;
  value: number | null;
  comparator: Comparator | null;
}

const comparatorPattern = /^(<=|>=|<|>)?\s*([+-]?(?:\d+\.?\d*|\.\d+))$/;

/** Reads `12.5`, `<0.5` or `>=100` (a censored value sent as NM or ST); text that is not a number keeps value null. */
export function numberWithComparator(text: string): Pick<ObxValue, 'value' | 'comparator'> {
  const m = comparatorPattern.exec(text.trim());
  if (!m) return { value: null, comparator: null };
  const value = Number(m[2]);
  if (!Number.isFinite(value)) return { value: null, comparator: null };
  return { value, comparator: (m[1] as Comparator | undefined) ?? null };
}

/** OBX-5 interpreted per OBX-2; unknown types are read as text. */
export function readObxValue(obx: Segment, d: Delimiters, valueType: string): ObxValue {
  const reps = repetitionsOf(rawField(obx, 5), d);
  const first = reps[0] ?? '';
  const comps = componentsOf(first, d).map((c) => unescapeText(c, d));
  switch (valueType) {
    case 'SN':
      return structuredNumeric(comps);
    case 'CE':
    case 'CWE':
    case 'CNE':
    case 'CF': {
      // Qualitative: the code when sent, else its text (Chapter 2A, CE and CWE).
      const valueText = comps[0] !== '' && comps[0] !== undefined ? comps[0] : (comps[1] ?? '');
      return { valueText, value: null, comparator: null };
    }
    default: {
      // Repetitions (text lines, Chapter 7 7.4.2.5) become lines; empty ones carry nothing.
      const valueText = reps.filter((r) => r !== '').map((r) => unescapeText(r, d)).join('\n');
      return { valueText, ...numberWithComparator(valueText) };
    }
  }
}

// Chapter 2A, SN (structured numeric): <comparator> ^ <num1> ^ <separator/suffix> ^ <num2>. `<^0.5` is a censored 0.5;
// `^1^:^128` a ratio and `^5^-^10` a range, which have no single value.
function structuredNumeric(comps: string[]): ObxValue {
  const [cmp = '', num1 = '', sep = '', num2 = ''] = comps;
  const valueText = `${cmp}${num1}${sep}${num2}`;
  if (sep !== '' || num2 !== '') return { valueText, value: null, comparator: null };
  const parsed = numberWithComparator(num1);
  if (parsed.value === null || parsed.comparator !== null) return { valueText, value: null, comparator: null };
  if (cmp === '' || cmp === '=') return { valueText, value: parsed.value, comparator: null };
  if (cmp === '<' || cmp === '>' || cmp === '<=' || cmp === '>=') return { valueText, value: parsed.value, comparator: cmp };
  return { valueText, value: null, comparator: null };
}

export type StatusReading = { kind: 'status'; status: ResultStatus } | { kind: 'missing' } | { kind: 'not-a-result'; code: string };

/** HL7 Table 0085 (observation result status) onto the laboratory's statuses. */
export function readObxStatus(code: string): StatusReading {
  switch (code.trim().toUpperCase()) {
    case '':
      return { kind: 'missing' };
    case 'F':
    case 'U': // U: changed to final without retransmitting results
      return { kind: 'status', status: 'final' };
    case 'C':
      return { kind: 'status', status: 'correction' };
    case 'P':
    case 'R': // R: entered, not verified
    case 'S': // S: partial
      return { kind: 'status', status: 'preliminary' };
    case 'X':
      return { kind: 'status', status: 'cannot-be-done' };
    default:
      // D (delete), W (wrong), I (pending), N (not asked), O (order only), A (amended base) carry no result to store.
      return { kind: 'not-a-result', code: code.trim() };
  }
}
