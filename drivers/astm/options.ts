// Per-instrument ASTM options. Every default is the standard (LIS01-A2 link layer, LIS2-A2 records);
// each known deviation of real analyzers is a separate opt-in, listed with the analyzers that need it
// in drivers/astm/README.md.
import { z } from 'zod';

/** A field reference such as `R.13` or `O.3` (record type, 1-based field number, record type = field 1). */
export const fieldRefPattern = /^([HPORCQML])\.(\d{1,2})$/;

const fieldRef = z.string().regex(fieldRefPattern, 'expected a field reference such as R.13 or O.3');

/** Where the accession (specimen id) is read from; LIS2-A2 9.4.3: O.3 specimen id by default. */
export const accessionSourceSchema = z.strictObject({
  field: fieldRef.refine((f) => /^[OP]\./.test(f), 'the accession comes from an O or P record').default('O.3'),
  /** 1-based component (Roche c311 sends `counter^SID^...`: component 2). */
  component: z.number().int().min(1).default(1),
});

/** A laboratory rule that marks results QC, beside the standard's O.12 = Q and H.12 = Q. */
export const qcRuleSchema = z.strictObject({
  field: fieldRef.refine((f) => /^[HOR]\./.test(f), 'expected an H, O or R field'),
  component: z.number().int().min(1).default(1),
  /** Regular expression tested against the trimmed, unescaped component. */
  pattern: z.string().min(1).refine(isRegExp, 'expected a valid regular expression'),
});

/** Trailer after C1 C2: LIS01-A2 8.3.1 says CR LF; some analyzers send one of them only. */
export const trailers = ['CRLF', 'LF', 'CR'] as const;

/**
 * Two-way ASTM: answering the analyzer's host queries (LIS2-A2 Q records) and downloading the pending worklist, both
 * from the LIMS's orders. Off by default: a receive-only gateway rejects Q records with their reason.
 */
export const ordersOptionsSchema = z.strictObject({
  /** Answer host queries with the LIMS's orders. */
  query: z.boolean().default(false),
  /** Poll the LIMS's pending worklist for this instrument and send each new specimen's orders once. */
  download: z.boolean().default(false),
  /** The analyzer's deadline for an answer, counted from the end of its query (its host query timeout setting). */
  queryTimeoutMs: z.number().int().min(1_000).max(300_000).default(10_000),
  /** How often download mode asks the LIMS for the pending worklist. */
  pollIntervalMs: z.number().int().min(1_000).max(3_600_000).default(30_000),
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
  /** Put the LIMS's patient (id, name, birth date, sex) into the P record; otherwise P carries nothing but its number. */
  patient: z.boolean().default(false),
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
  accession: accessionSourceSchema.default({ field: 'O.3', component: 1 }),
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
    .array(fieldRef.refine((f) => /^[HOR]\./.test(f), 'expected an H, O or R field'))
    .min(1)
    .default(['R.13', 'R.12', 'H.14']),
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

/** The parts of a field reference; the pattern guarantees the match. */
export function splitFieldRef(ref: string): { record: string; field: number } {
  let parts = fieldRefs.get(ref);
  if (parts === undefined) {
    const m = fieldRefPattern.exec(ref);
    parts = { record: m?.[1] ?? 'R', field: Number(m?.[2] ?? 0) };
    fieldRefs.set(ref, parts);
  }
  return parts;
}

// References come from the configuration (a few per instrument) and are read for every result: parsed once each.
const fieldRefs = new Map<string, { record: string; field: number }>();

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
