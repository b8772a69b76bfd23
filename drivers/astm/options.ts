// Per-instrument ASTM options. Every default is the standard (LIS01-A2 link layer, LIS2-A2 records);
// each known deviation of real analyzers is a separate opt-in, listed with the analyzers that need it
// in drivers/astm/README.md.
import { z } from 'zod';
import { astmGrammar, fieldLocationSchema, isFieldLocation, type FieldLocation } from '../../src/field-location.js';
import { ordersOptionsShape } from '../../src/orders/options.js';

// A result's values are read from its own record and those it belongs to (LIS2-A2 nesting H > P > O > R).
const resultRecords = ['H', 'P', 'O', 'R'];
const ofResult = { ids: resultRecords, why: "a result's values are read from its H, P, O or R record" };

/** A field location (`O.3`, `O.3.2`, `R.5`; src/field-location.ts) of a result's records. */
const location = fieldLocationSchema(astmGrammar, ofResult);

const olderAccessionSchema = z.strictObject({ field: z.string(), component: z.number().int().min(1).max(999).default(1) });

/**
 * Where the accession (specimen id) is read from; LIS2-A2 9.4.3: O.3 specimen id. Written as a location (`O.3.2`), or
 * as `{field, component}` as configurations did before locations were general (Roche c311: `counter^SID^...`).
 */
export const accessionSourceSchema = z
  .union([z.string(), z.custom<FieldLocation>(isFieldLocation), z.record(z.string(), z.unknown())])
  .transform((value, ctx) => {
    if (typeof value === 'string' || isFieldLocation(value)) return value;
    const older = olderAccessionSchema.safeParse(value);
    if (older.success) return `${older.data.field}.${older.data.component}`;
    for (const issue of older.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message });
    return z.NEVER;
  })
  .pipe(fieldLocationSchema(astmGrammar, { ids: ['O', 'P'], why: 'the accession comes from an O or P record' }));

/** A laboratory rule that marks results QC, beside the standard's O.12 = Q and H.12 = Q. */
export const qcRuleSchema = z
  .strictObject({
    /** A location of an H, O or R record; `component` is the older way to name its component. */
    field: z.union([z.string(), z.custom<FieldLocation>(isFieldLocation)]),
    component: z.number().int().min(1).max(999).optional(),
    /** Regular expression tested against the trimmed, unescaped text at the location. */
    pattern: z.string().min(1).refine(isRegExp, 'expected a valid regular expression'),
  })
  .transform(({ field, component, pattern }) => ({ field: withComponent(field, component), pattern }))
  .pipe(z.strictObject({ field: fieldLocationSchema(astmGrammar, { ids: ['H', 'O', 'R'], why: 'expected an H, O or R field' }), pattern: z.string() }));

// The older form named the component beside the field (`{field: O.16, component: 2}`); one location says it now.
function withComponent(field: string | FieldLocation, component: number | undefined): string | FieldLocation {
  if (component === undefined) return field;
  return typeof field === 'string' ? `${field}.${component}` : { ...field, component };
}

/** Trailer after C1 C2: LIS01-A2 8.3.1 says CR LF; some analyzers send one of them only. */
export const trailers = ['CRLF', 'LF', 'CR'] as const;

/**
 * Two-way ASTM: answering the analyzer's host queries (LIS2-A2 Q records) and downloading the pending worklist, both
 * from the LIMS's orders. Off by default: a receive-only gateway rejects Q records with their reason.
 */
export const ordersOptionsSchema = z.strictObject({
  ...ordersOptionsShape,
  /** The Q.3 component that holds the specimen id (LIS2-A2 11.1.3: patient ID ^ specimen ID, so 2). */
  specimenComponent: z.number().int().min(1).max(32).default(2),
  /** O.12 of a sent order: `N` new requests with a new specimen, `A` add to an existing specimen (LIS2-A2 O.12). */
  actionCode: z.enum(['N', 'A']).default('N'),
  /** L.3 of an answer that carries orders: `N` normal, `F` last request for information processed (LIS2-A2 L.3). */
  terminationCode: z.enum(['N', 'F']).default('N'),
  /**
   * What a query with no orders to send is answered with: `terminator` (H and `L|1|I`, LIS2-A2 L.3 "no information
   * available from last query"), `order` (an O record per specimen with `actionCode` and report type `Y`), or `none`.
   */
  noInformation: z
    .strictObject({
      answer: z.enum(['terminator', 'order', 'none']).default('terminator'),
      actionCode: z
        .string()
        .regex(/^[A-Z]$/, 'expected one upper-case letter')
        .default('C'),
    })
    .default({ answer: 'terminator', actionCode: 'C' }),
});

/** Validated two-way options. */
export type OrdersOptions = z.infer<typeof ordersOptionsSchema>;

/** The defaults: two-way off. */
export const ordersDefaults: OrdersOptions = ordersOptionsSchema.parse({});

/** The ASTM options of one instrument, validated once when the configuration is loaded. */
export const astmOptionsSchema = z.strictObject({
  /** `link`: LIS01-A2 ENQ/frames/EOT. `none`: bare records H..L with no link layer (some analyzers). */
  framing: z.enum(['link', 'none']).default('link'),
  /** Whole frame size STX..LF: 247 per E1381-95 (240 text characters); LIS01-A2 allows up to 64,000. */
  maxFrameBytes: z.number().int().min(8).max(64_000).default(247),
  charset: z.enum(['latin1', 'utf8']).default('latin1'),
  accession: accessionSourceSchema.prefault('O.3.1'),
  /** 1-based R.3 components that make the analyzer code (LIS2-A2 10.1.3: `^^^code` = [4]). */
  codeComponents: z.array(z.number().int().min(1).max(32)).min(1).default([4]),
  /** `joined`: all of `codeComponents`, joined by `codeJoin`. `first-non-empty`: the first of them that is not empty. */
  codePick: z.enum(['joined', 'first-non-empty']).default('joined'),
  /** What joins the components of a composite code: `/` so mappings read as the vendor prints them (`10/1`). */
  codeJoin: z.string().min(1).max(4).default('^'),
  /**
   * Fields tried in order for the result time (LIS2-A2: R.13 completed, R.12 started, H.14 message);
   * the first non-empty one decides. H, O and R fields only: P holds demographics (P.8 is the birth date).
   */
  resultTime: z
    .array(fieldLocationSchema(astmGrammar, { ids: ['H', 'O', 'R'], why: 'a result time is read from an H, O or R record, never from patient data' }))
    .min(1)
    .prefault(['R.13', 'R.12', 'H.14']),
  /** Where the unit is: R.5.1 by default; `R.5`, the whole field, for analyzers that write `10^3/uL` unescaped. */
  unit: location.prefault('R.5.1'),
  /** Analyzer codes the laboratory chose not to load (raw signals, image file names); not rejected, not loaded. */
  ignoreCodes: z.array(z.string().trim().min(1)).default([]),
  qcRules: z.array(qcRuleSchema).default([]),
  /** Status when R.9 is empty (Sysmex XP-100 leaves it empty); `reject` rejects such results. */
  emptyStatus: z.enum(['final', 'preliminary', 'reject']).default('final'),
  orders: ordersOptionsSchema.default(ordersDefaults),
  deviations: z
    .strictObject({
      /**
       * `standard`: next = (last + 1) mod 8; the last frame again is a retransmission (LIS01-A2 8.3.2).
       * `restart-at-1`: 1 is also accepted where any other number is expected (analyzers wrapping 7 → 1).
       * `any`: every digit accepted (Yumizen H500 capture). A lost frame can then no longer be noticed by
       *   its number, only by the records it leaves broken: use it only where an analyzer needs it.
       */
      frameNumbers: z.enum(['standard', 'restart-at-1', 'any']).default('standard'),
      trailers: z.array(z.enum(trailers)).min(1).default(['CRLF']),
      /** The standard requires upper case hex; the issue accepts lower case by default. */
      lowerCaseChecksum: z.boolean().default(true),
      /** Frames with no C1 C2 at all (the frame is then accepted unverified). */
      missingChecksum: z.boolean().default(false),
      /**
       * `stx-text-etx`: frames are `STX text ETX` (or ETB) with no frame number, checksum or trailer, as some
       * chemiluminescence analyzers send them; they are accepted unverified.
       */
      frameFormat: z.enum(['standard', 'stx-text-etx']).default('standard'),
      /**
       * A message whose last frame ended with ETX is complete at EOT even without an L record (some cobas c111
       * firmware). Every frame has been ACKed by then, so a failed commit is retried from memory.
       */
      completeAtEot: z.boolean().default(false),
    })
    .default({ frameNumbers: 'standard', trailers: ['CRLF'], lowerCaseChecksum: true, missingChecksum: false, frameFormat: 'standard', completeAtEot: false }),
});

/** Validated ASTM options. */
export type AstmOptions = z.infer<typeof astmOptionsSchema>;
/** ASTM options as written in the configuration. */
export type AstmOptionsInput = z.input<typeof astmOptionsSchema>;
/** The link-layer deviations an instrument is allowed. */
export type LinkDeviations = AstmOptions['deviations'];

/** Validates options; throws the zod error (a start-up failure, never wire data). */
export function parseAstmOptions(input: unknown): AstmOptions {
  return astmOptionsSchema.parse(input ?? {});
}

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
