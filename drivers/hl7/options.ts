// Per-instrument HL7 options, validated once when the configuration is loaded.
import { z } from 'zod';
import { parseFieldRef, type FieldRef } from './parse.js';

const isFieldRef = (v: unknown): v is FieldRef => typeof v === 'object' && v !== null && 'segment' in v && 'field' in v;

// Accepts `OBR-3.1` as configured, or an already parsed FieldRef, so parsing the options twice is harmless.
const fieldRef = (allowed: readonly string[]): z.ZodType<FieldRef, string | FieldRef> =>
  z.union([z.string(), z.custom<FieldRef>(isFieldRef)]).transform((value, ctx) => {
    const ref = typeof value === 'string' ? parseFieldRef(value) : value;
    if (!ref || !allowed.includes(ref.segment)) {
      ctx.addIssue({
        code: 'custom',
        message: `expected ${allowed.join('|')}-<field>[.<component>[.<subcomponent>]], got '${String(typeof value === 'string' ? value : value.segment)}'`,
      });
      return z.NEVER;
    }
    return ref;
  });

/** Options of one HL7 instrument; every default is the standard's reading. */
export const hl7OptionsSchema = z.strictObject({
  /** Where the accession is read, first non-empty wins (SPM-2 is v2.5+; OBR-3 filler, OBR-2 placer order number). */
  accession: z
    .array(fieldRef(['OBR', 'SPM', 'ORC']))
    .min(1)
    .prefault(['OBR-3', 'OBR-2', 'SPM-2']),
  /** Where the analyzer's test code is read, first non-empty wins (OBX-3 observation identifier; OBX-4 for senders that put it there). */
  code: z
    .array(fieldRef(['OBX']))
    .min(1)
    .prefault(['OBX-3']),
  /** Take the code from the CE/CWE triplet of this coding system (OBX-3.3 or the alternate OBX-3.6), e.g. `LN`. */
  codingSystem: z.string().trim().min(1).optional(),
  /** Result time, first present wins (OBX-14, then OBR-7 observation time, then MSH-7). */
  time: z
    .array(fieldRef(['OBX', 'OBR', 'MSH', 'SPM']))
    .min(1)
    .prefault(['OBX-14', 'OBR-7', 'MSH-7']),
  /** Where the measuring unit's id is read for provenance (OBX-18 equipment instance identifier); null when the analyzer uses OBX-18 for something else. */
  equipment: fieldRef(['OBX']).nullable().prefault('OBX-18'),
  /**
   * Where the unit is: `component`, OBX-6.1 (the standard's CE identifier); `field`, the whole of OBX-6, for analyzers
   * that write an unescaped component separator in the unit (`10^6/uL`).
   */
  unit: z.enum(['component', 'field']).default('component'),
  /** Status for an OBX-11 left empty (HL7 requires it; some analyzers never send it); `reject` follows the standard. */
  missingStatus: z.enum(['final', 'preliminary', 'reject']).default('final'),
  /** OBX-2 value types that are not results (images, pointers) and are skipped without a rejection. */
  skipValueTypes: z.array(z.string().trim().min(1)).default(['ED', 'RP']),
  /** Analyzer codes that are not results (mode rows, histogram lines) and are skipped without a rejection. */
  skipCodes: z.array(z.string().trim().min(1)).default([]),
  /** Marks a message's results as QC when the field holds one of the values (e.g. Mindray MSH-16 = 2). */
  qc: z.strictObject({ field: fieldRef(['MSH', 'OBR', 'SPM', 'ORC']), equals: z.array(z.string()).min(1) }).optional(),
  /** Character set of the payload: `auto` takes UTF-8 when the bytes are valid UTF-8, else Latin-1. */
  charset: z.enum(['auto', 'utf8', 'latin1']).default('auto'),
  /** Largest message accepted, in bytes; a bigger one is refused (AR) without being buffered. */
  maxMessageBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
  /** Application ack when some results were rejected but others stored: AE reports the error to the sender. */
  partialRejectionAck: z.enum(['AE', 'AA']).default('AE'),
  /** MSH-3 of our acknowledgments. */
  sendingApplication: z.string().default('LABGATE'),
});
export type Hl7Options = z.output<typeof hl7OptionsSchema>;
export type Hl7OptionsInput = z.input<typeof hl7OptionsSchema>;

/** The options with every default applied (idempotent; throws on invalid options, a configuration error). */
export function hl7Options(input: Hl7OptionsInput | Hl7Options = {}): Hl7Options {
  return hl7OptionsSchema.parse(input);
}
