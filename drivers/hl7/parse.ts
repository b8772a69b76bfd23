// HL7 v2 message structure: segments, fields, repetitions, components, subcomponents
// (HL7 v2.5.1 Chapter 2, 2.5 "Message construction rules" and 2.6 "Message delimiters").
import { readDelimiters, type Delimiters } from './delimiters.js';
import { unescapeText } from './escape.js';
import { piece } from '../../src/delimited-text.js';

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

/** Where a value lives: `SEG-field[.component[.subcomponent]]`, 1-based, first repetition unless given. */
export interface FieldRef {
  segment: string;
  field: number;
  component: number;
  subcomponent: number;
  repetition?: number;
}

/** The unescaped value at a position ('' when absent). MSH-1 and MSH-2 are returned verbatim. */
export function valueAt(segment: Segment, d: Delimiters, ref: Omit<FieldRef, 'segment'>): string {
  const raw = rawField(segment, ref.field);
  if (segment.id === 'MSH' && ref.field <= 2) return raw;
  const rep = piece(raw, d.repetition, ref.repetition ?? 0);
  const comp = piece(rep, d.component, ref.component - 1);
  return unescapeText(piece(comp, d.subcomponent, ref.subcomponent - 1), d);
}

/** Every repetition of SEG-n at one component, unescaped, empty ones kept. */
export function repeatedValues(segment: Segment, d: Delimiters, field: number, component = 1): string[] {
  return repetitionsOf(rawField(segment, field), d).map((rep) => unescapeText(componentsOf(rep, d)[component - 1] ?? '', d));
}

/** Parses `OBR-3`, `SPM-2.2` or `OBX-3.1.1` into a FieldRef; undefined when malformed. */
export function parseFieldRef(text: string): FieldRef | undefined {
  const m = /^([A-Z][A-Z0-9]{2})-(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return undefined;
  const n = (s: string | undefined): number => (s === undefined ? 1 : Number(s));
  if ([m[2], m[3], m[4]].some((s) => s !== undefined && Number(s) < 1)) return undefined;
  return { segment: m[1]!, field: Number(m[2]), component: n(m[3]), subcomponent: n(m[4]) };
}
