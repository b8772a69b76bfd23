// HL7 v2 message structure: segments, fields, repetitions, components, subcomponents
// (HL7 v2.5.1 Chapter 2, 2.5 "Message construction rules" and 2.6 "Message delimiters").
import { readDelimiters, type Delimiters } from './delimiters.js';
import { unescapeText } from './escape.js';
import { piece } from '../../src/delimited-text.js';
import type { FieldLocation } from '../../src/field-location.js';
import type { FieldValue } from './encode.js';

/** One segment; `fields[n]` is SEG-n still escaped (`fields[0]` is the segment id; for MSH, `fields[1]` is MSH-1). */
export interface Segment {
  id: string;
  fields: string[];
}

/** A parsed message: its own delimiters and its segments in order. */
export interface Hl7Message {
  delimiters: Delimiters;
  segments: Segment[];
}

export type ParseResult = { kind: 'message'; message: Hl7Message } | { kind: 'invalid'; reason: string };

/** Splits a message on CR (2.5.2), also accepting LF and CRLF from senders that bend the rule. */
export function parseMessage(text: string): ParseResult {
  const lines = text.split(/\r\n|\r|\n/).filter((l) => l.trim().length > 0);
  const first = lines[0]?.replace(/^[\s\0]+/, '');
  if (first === undefined) return { kind: 'invalid', reason: 'empty message' };
  const read = readDelimiters(first);
  if (read.kind === 'invalid') return read;
  const d = read.delimiters;
  const segments: Segment[] = [];
  for (const [i, line] of [first, ...lines.slice(1)].entries()) {
    const parts = line.split(d.field);
    const id = parts[0]!.trim();
    if (!/^[A-Z][A-Z0-9]{2}$/.test(id)) return { kind: 'invalid', reason: `segment ${i + 1} has no valid segment id` };
    // MSH-1 is the field separator itself, so MSH field numbers are one more than the split index.
    const fields = id === 'MSH' ? [id, d.field, ...parts.slice(1)] : parts;
    segments.push({ id, fields });
  }
  return { kind: 'message', message: { delimiters: d, segments } };
}

/** Raw (escaped) SEG-n, or '' when absent. */
export function rawField(segment: Segment, n: number): string {
  return segment.fields[n] ?? '';
}

/** Splits a raw field into repetitions (2.5.5). */
export function repetitionsOf(raw: string, d: Delimiters): string[] {
  return raw.split(d.repetition);
}

/** Splits one repetition into components. */
export function componentsOf(raw: string, d: Delimiters): string[] {
  return raw.split(d.component);
}

/** Splits one component into subcomponents. */
export function subcomponentsOf(raw: string, d: Delimiters): string[] {
  return raw.split(d.subcomponent);
}

/** Where a value lives within a segment: a field location without its segment, first repetition unless given (0-based). */
export type Position = Omit<FieldLocation, 'segment'> & { repetition?: number };

/** The still escaped text at a position ('' when absent): the whole field (one repetition), component or subcomponent. */
export function rawAt(segment: Segment, d: Delimiters, at: Position): string {
  const rep = piece(rawField(segment, at.field), d.repetition, at.repetition ?? 0);
  if (at.component === undefined) return rep;
  const comp = piece(rep, d.component, at.component - 1);
  return at.subcomponent === undefined ? comp : piece(comp, d.subcomponent, at.subcomponent - 1);
}

/** The unescaped value at a position ('' when absent). MSH-1 and MSH-2 are returned verbatim. */
export function valueAt(segment: Segment, d: Delimiters, at: Position): string {
  if (segment.id === 'MSH' && at.field <= 2) return rawField(segment, at.field);
  return unescapeText(rawAt(segment, d, at), d);
}

/** True when the text at a position holds parts below it (components of a whole field, subcomponents of a component). */
export function holdsParts(segment: Segment, d: Delimiters, at: Position): boolean {
  if (at.subcomponent !== undefined || (segment.id === 'MSH' && at.field <= 2)) return false;
  const raw = rawAt(segment, d, at);
  return raw.includes(d.subcomponent) || (at.component === undefined && raw.includes(d.component));
}

/** A raw field as values (repetitions of components of subcomponents, each unescaped), to be written back by encode.ts. */
export function fieldValues(raw: string, d: Delimiters): FieldValue {
  return repetitionsOf(raw, d).map((rep) => componentsOf(rep, d).map((comp) => subcomponentsOf(comp, d).map((leaf) => unescapeText(leaf, d))));
}

/** Every repetition of SEG-n at one component, unescaped, empty ones kept. */
export function repeatedValues(segment: Segment, d: Delimiters, field: number, component = 1): string[] {
  return repetitionsOf(rawField(segment, field), d).map((rep) => unescapeText(componentsOf(rep, d)[component - 1] ?? '', d));
}
