// Per-instrument HL7 options, validated once when the configuration is loaded.
import { z } from 'zod';
import { fieldLocationSchema, hl7Grammar, type FieldLocation } from '../../src/field-location.js';
import { ordersOptionsShape } from '../../src/orders/options.js';

/** A field location of any segment (`PID-2.1`, `SAC-3`, `OBR-3.1`): the analyzer's manual decides where its values are. */
const location = fieldLocationSchema(hl7Grammar);
const locations = (defaults: string[]) => z.array(location).min(1).prefault(defaults);
// A result time is never read from the patient's segments: PID-7 is the birth date.
const timeLocation = fieldLocationSchema(hl7Grammar, { ids: ['PID', 'PD1', 'NK1'], why: 'a result time is not read from patient data', refuse: true });

// The unit's two names before locations were general: OBX-6.1, or the whole of OBX-6.
const unitNames: Record<string, string> = { component: 'OBX-6.1', field: 'OBX-6' };

/**
 * Two-way HL7: host queries answered and orders downloaded from the LIMS, in the dialect the analyzer speaks:
 * `display-query` (v2.3.1 QRY^Q02 answered by QCK^Q02 and DSR^Q03, as Mindray's BS and BC series) or `law` (IHE LAW:
 * QBP^Q11 answered by RSP^K11 and OML^O33; downloads as OML^O33). A query of the other dialect is journaled and
 * rejected with that reason.
 */
export const hl7OrdersSchema = z
  .strictObject({
    ...ordersOptionsShape,
    dialect: z.enum(['display-query', 'law']).default('display-query'),
    /** How long the analyzer has to accept a DSR^Q03 or OML^O33 (its ACK^Q03 or ORL^O34); unanswered, it is not recorded as sent. */
    ackTimeoutMs: z.number().int().min(1_000).max(300_000).default(10_000),
    /** The specimen type the analyzer is told (DSP-26; SPM-4), e.g. `serum`; empty by default. */
    specimenType: z.string().max(64).default(''),
    /** The coding system of the analyzer's codes in OBR-4 of an OML^O33 (e.g. `99ROC`); empty by default. */
    codingSystem: z.string().max(32).default(''),
    /**
     * The analyzer's own order port, for analyzers that expect the host to connect back for what it sends them:
     * answers and downloads go out on an MLLP connection labgate opens to this host and port (only there), and the
     * analyzer's acknowledgments are read on it; results and queries still arrive on the instrument's transport.
     * Null (the default): everything shares the instrument's one connection.
     */
    orderPort: z
      .strictObject({ host: z.string().trim().min(1).max(253), port: z.number().int().min(1).max(65_535) })
      .nullable()
      .default(null),
  })
  .refine((o) => !o.download || o.dialect === 'law', {
    message: 'download mode sends OML^O33, an IHE LAW message: it needs dialect: law (the display-query dialect has no unsolicited download)',
    path: ['download'],
  });

/** Options of one HL7 instrument; every default is the standard's reading. */
export const hl7OptionsSchema = z.strictObject({
  /** Where the accession is read, first non-empty wins (SPM-2 is v2.5+; OBR-3 filler, OBR-2 placer order number). */
  accession: locations(['OBR-3.1', 'OBR-2.1', 'SPM-2.1.1']),
  /** Where the analyzer's test code is read, first non-empty wins (OBX-3 observation identifier; OBX-4 for senders that put it there). */
  code: locations(['OBX-3.1']),
  /** Take the code from the CE/CWE triplet of this coding system (OBX-3.3 or the alternate OBX-3.6), e.g. `LN`. */
  codingSystem: z.string().trim().min(1).optional(),
  /** Result time, first present wins (OBX-14, then OBR-7 observation time, then MSH-7). */
  time: z.array(timeLocation).min(1).prefault(['OBX-14.1', 'OBR-7.1', 'MSH-7.1']),
  /** Where the measuring unit's id is read for provenance (OBX-18 equipment instance identifier); null when the analyzer uses OBX-18 for something else. */
  equipment: location.nullable().prefault('OBX-18.1'),
  /**
   * Where the unit is: OBX-6.1 (the standard's CE identifier, also called `component`); the whole of OBX-6 (`field`) for
   * analyzers that write an unescaped component separator in the unit (`10^6/uL`).
   */
  unit: z
    .union([z.enum(['component', 'field']).transform((name) => unitNames[name]!), z.string(), z.custom<FieldLocation>((v) => typeof v === 'object')])
    .pipe(location)
    .prefault('OBX-6.1'),
  /** Status for an OBX-11 left empty (HL7 requires it; some analyzers never send it); `reject` follows the standard. */
  missingStatus: z.enum(['final', 'preliminary', 'reject']).default('final'),
  /** OBX-2 value types that are not results (images, pointers) and are skipped without a rejection. */
  skipValueTypes: z.array(z.string().trim().min(1)).default(['ED', 'RP']),
  /** Analyzer codes that are not results (mode rows, histogram lines) and are skipped without a rejection. */
  skipCodes: z.array(z.string().trim().min(1)).default([]),
  /** Marks a message's results as QC when the field holds one of the values (e.g. Mindray MSH-16 = 2). */
  qc: z.strictObject({ field: location, equals: z.array(z.string()).min(1) }).optional(),
  /**
   * `mllp`: each message in a `<VT> … <FS><CR>` block (the MLLP transport). `none`: bare segments, a message starting
   * at each MSH and ending at the next one or after `idleMs` of silence (some serial analyzers; saved captures).
   */
  framing: z.enum(['mllp', 'none']).default('mllp'),
  /** Silence that ends a bare message (`framing: none`). */
  idleMs: z.number().int().min(50).max(60_000).default(500),
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
  orders: hl7OrdersSchema.prefault({}),
});
export type Hl7Options = z.output<typeof hl7OptionsSchema>;
export type Hl7OptionsInput = z.input<typeof hl7OptionsSchema>;

/** The options with every default applied (idempotent; throws on invalid options, a configuration error). */
export function hl7Options(input: Hl7OptionsInput | Hl7Options = {}): Hl7Options {
  return hl7OptionsSchema.parse(input);
}
