// Where a value sits in an analyzer's message, written the same way in every driver's options: the segment (HL7) or
// record (ASTM) id, the field's number, then optionally a component and a subcomponent, all 1-based. Without a
// component the whole field is read (its first repetition), with its component separators as sent; without a
// subcomponent, the whole component. HL7 separates the id with `-` as its standard writes it (`PID-2.1`); ASTM with `.`
// as LIS2-A2 does (`O.3.2`). The interface manual of each analyzer decides where its values are, so any id the
// protocol knows is accepted; the driver decides which of them a result can be read from.
import { z } from 'zod';

/** One location, parsed. `component` undefined: the whole field; `subcomponent` undefined: the whole component. */
export interface FieldLocation {
  segment: string;
  field: number;
  component?: number;
  subcomponent?: number;
}

/** What one protocol's locations look like. */
export interface LocationGrammar {
  /** Between the id and the field number. */
  separator: '-' | '.';
  /** A segment or record id of this protocol. */
  id: RegExp;
  /** What `id` allows, in words, for an error message. */
  idText: string;
  /** Whether the protocol has subcomponents (HL7 has; LIS2-A2 has none). */
  subcomponents: boolean;
  /** An example for an error message. */
  example: string;
}

/** HL7 v2: `SEG-field[.component[.subcomponent]]` (Chapter 2, 2.5: a segment id is three upper-case characters). */
export const hl7Grammar: LocationGrammar = {
  separator: '-',
  id: /^[A-Z][A-Z0-9]{2}$/,
  idText: 'a segment id such as OBR or PID',
  subcomponents: true,
  example: 'OBR-3, PID-2.1 or SPM-2.1.1',
};

/** ASTM LIS2-A2: `R.field[.component]` (a record type is one letter, field 1 is the record type itself). */
export const astmGrammar: LocationGrammar = {
  separator: '.',
  id: /^[A-Z]$/,
  idText: 'a record type such as O or R',
  subcomponents: false,
  example: 'O.3, O.3.2 or R.5',
};

export type LocationReading = { kind: 'location'; location: FieldLocation } | { kind: 'invalid'; reason: string };

// Bounds are generous (HL7 segments have well under 100 fields); a larger number is a typo, not a field.
const maxNumber = 999;

/** Which ids one option takes: only `ids`, or (`refuse`) any but them, with the option's reason. */
export interface LocationLimit {
  ids: readonly string[];
  why: string;
  refuse?: boolean;
}

/** Parses a location of `grammar`; `limit` narrows the ids one option takes. */
export function parseFieldLocation(text: string, grammar: LocationGrammar, limit?: LocationLimit): LocationReading {
  const t = text.trim();
  const at = t.indexOf(grammar.separator);
  const invalid = (why: string): LocationReading => ({ kind: 'invalid', reason: `'${text}' is not a field location: ${why} (e.g. ${grammar.example})` });
  if (at <= 0) return invalid(`expected ${grammar.idText}, '${grammar.separator}' and a field number`);
  const id = t.slice(0, at);
  if (!grammar.id.test(id)) return invalid(`'${id}' is not ${grammar.idText}`);
  const numbers = t.slice(at + 1).split('.');
  const depth = grammar.subcomponents ? 3 : 2;
  if (numbers.length > depth)
    return invalid(grammar.subcomponents ? 'at most field.component.subcomponent' : 'at most field.component (ASTM has no subcomponents)');
  const parsed = numbers.map((n) => (/^\d{1,3}$/.test(n) ? Number(n) : NaN));
  const bad = parsed.findIndex((n) => !(n >= 1 && n <= maxNumber));
  if (bad >= 0) return invalid(`${['field', 'component', 'subcomponent'][bad]} '${numbers[bad]}' is not a number from 1 to ${maxNumber}`);
  if (limit !== undefined && limit.ids.includes(id) === (limit.refuse ?? false)) {
    return { kind: 'invalid', reason: `'${text}': ${limit.why} (${limit.ids.join(', ')})` };
  }
  const [field, component, subcomponent] = parsed as [number, number?, number?];
  const location: FieldLocation = { segment: id, field };
  if (component !== undefined) location.component = component;
  if (subcomponent !== undefined) location.subcomponent = subcomponent;
  return { kind: 'location', location };
}

/** A location as the configuration writes it. */
export function formatFieldLocation(location: FieldLocation, grammar: LocationGrammar): string {
  const parts = [location.field, location.component, location.subcomponent].filter((n) => n !== undefined);
  return `${location.segment}${grammar.separator}${parts.join('.')}`;
}

/** True for an already parsed location (options parsed twice stay parsed). */
export function isFieldLocation(value: unknown): value is FieldLocation {
  return (
    typeof value === 'object' && value !== null && typeof (value as FieldLocation).segment === 'string' && typeof (value as FieldLocation).field === 'number'
  );
}

/**
 * The zod schema of one location option: a string of `grammar` (or an already parsed location, so parsing options
 * twice is harmless), with the grammar's reason when it is not one.
 */
export function fieldLocationSchema(grammar: LocationGrammar, limit?: LocationLimit): z.ZodType<FieldLocation, string | FieldLocation> {
  return z.union([z.string(), z.custom<FieldLocation>(isFieldLocation)]).transform((value, ctx) => {
    const reading = parseFieldLocation(typeof value === 'string' ? value : formatFieldLocation(value, grammar), grammar, limit);
    if (reading.kind === 'location') return reading.location;
    ctx.addIssue({ code: 'custom', message: reading.reason });
    return z.NEVER;
  });
}
