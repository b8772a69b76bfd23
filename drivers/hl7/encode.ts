// The writing side of parse.ts: used for acknowledgments and for the round-trip tests.
import { encodingCharacters, type Delimiters } from './delimiters.js';
import { escapeText } from './escape.js';

/** A field as values: repetitions of components of subcomponents, each leaf unescaped text. */
export type FieldValue = string[][][];

/** Escapes and joins one field (2.5.5: repetition, then component, then subcomponent). */
export function encodeField(value: FieldValue, d: Delimiters): string {
  return value.map((rep) => rep.map((comp) => comp.map((sub) => escapeText(sub, d)).join(d.subcomponent)).join(d.component)).join(d.repetition);
}

/** Writes one segment; `fields[0]` is SEG-1. For MSH pass MSH-3 onwards: MSH-1 and MSH-2 come from `d`. */
export function encodeSegment(id: string, fields: readonly FieldValue[], d: Delimiters): string {
  const body = fields.map((f) => encodeField(f, d));
  if (id === 'MSH') return ['MSH', encodingCharacters(d), ...body].join(d.field);
  return [id, ...body].join(d.field);
}

/** A plain text leaf as a FieldValue (`''` gives an empty field). */
export function text(value: string): FieldValue {
  return [[[value]]];
}

/** Components given as plain text leaves. */
export function components(...values: string[]): FieldValue {
  return [values.map((v) => [v])];
}
