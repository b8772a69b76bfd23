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
  resultTime: z.array(fieldRef.refine((f) => /^[HOR]\./.test(f), 'expected an H, O or R field')).min(1).default(['R.13', 'R.12', 'H.14']),
  /** Analyzer codes the laboratory chose not to load (raw signals, image file names); not rejected, not loaded. */
  ignoreCodes: z.array(z.string().trim().min(1)).default([]),
  qcRules: z.array(qcRuleSchema).default([]),
  /** Status when R.9 is empty (Sysmex XP-100 leaves it empty); `reject` rejects such results. */
  emptyStatus: z.enum(['final', 'preliminary', 'reject']).default('final'),
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
