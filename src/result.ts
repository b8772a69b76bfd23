// The keyed result: one normalized analyzer result and the identity it is deduplicated on.
// ARCHITECTURE.md invariant 3: the dedup key is byte-identical to the one the central system computes,
// and nothing the pipeline assigns (ingest time, message id, random UUID) ever enters it.
import { hash } from 'node:crypto';
import { z } from 'zod';

/**
 * Result status in the laboratory's words. Each driver maps the analyzer's own letter (ASTM R.9, HL7 OBX-11, kept
 * beside it as `statusCode`) onto these by one documented table (drivers/astm/status.ts, drivers/hl7/status.ts); a
 * letter outside its table is `unknown`, never final (invariant 8).
 */
export const resultStatuses = ['final', 'preliminary', 'correction', 'cannot-be-done', 'entered-in-error', 'deleted', 'unknown'] as const;
export type ResultStatus = (typeof resultStatuses)[number];

/** Comparator of a censored value (`<0.5`, `>500`). */
export const comparators = ['<', '>', '<=', '>='] as const;
export type Comparator = (typeof comparators)[number];

/** The canonical instant form of the key: UTC, whole seconds, `YYYY-MM-DDTHH:MM:SS+00:00`. */
export const canonicalInstantPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;

const nonEmptyTrimmed = z.string().trim().min(1, 'must not be empty');

// A specimen id of only control or format characters (`\X00\`, `&X00&`) is line noise, not an accession.
const printable = /[^\p{Cc}\p{Cf}\p{Z}\s]/u;

/**
 * Why `accession` is not one, or null. What identifies a specimen must be read with certainty (invariant 8): U+FFFD
 * stands where a byte could not be decoded in the instrument's charset (a UTF-8 instrument sending a Latin-1 byte,
 * line noise), so the id it was part of is unknown, and keying a result or a query on the rest would name another
 * specimen. The one rule for every driver's results (accessionSchema) and every host query's specimens.
 */
export function accessionFault(accession: string): string | null {
  const a = accession.trim();
  if (a === '') return 'must not be empty';
  if (!printable.test(a)) return 'must hold a printable character';
  if (a.includes('\ufffd')) return "holds a byte the instrument's charset could not decode (U+FFFD)";
  return null;
}

/** An accession, trimmed, checked by accessionFault. */
export const accessionSchema = z
  .string()
  .trim()
  .superRefine((a, ctx) => {
    const fault = accessionFault(a);
    if (fault !== null) ctx.addIssue({ code: 'custom', message: fault });
  });

/** Where a result came from; never part of the key. */
export const provenanceSchema = z.object({
  gatewayId: nonEmptyTrimmed,
  driver: z.enum(['astm', 'hl7', 'line']),
  /** The analyzer's own test code, as configured for the mapping (e.g. `GLU` or `WBC^1`). */
  analyzerCode: z.string(),
  /** Capture journal id, once the result has been stored; null while decoding without a store. */
  captureId: z.number().int().positive().nullable(),
  /** The analyzer unit that measured it, when the protocol says (HL7 OBX-18); provenance only, never in the key. */
  equipment: z.string().optional(),
});
export type Provenance = z.infer<typeof provenanceSchema>;

/** A normalized result, validated. `resultedAt` is always in the canonical key form. */
export const keyedResultSchema = z
  .object({
    accession: accessionSchema,
    analyteLoinc: nonEmptyTrimmed.transform((s) => s.toUpperCase()),
    instrumentId: nonEmptyTrimmed,
    resultedAt: z.string().regex(canonicalInstantPattern, 'must be YYYY-MM-DDTHH:MM:SS+00:00'),
    /** The value exactly as sent (trimmed). */
    valueText: z.string(),
    /** The number, only when the analyzer sent exactly one number (src/result-value.ts); never for a censored value. */
    value: z.number().finite().nullable(),
    /** Set, with `bound`, only for a censored value: `<0.5` is comparator `<`, bound 0.5, value null. */
    comparator: z.enum(comparators).nullable(),
    bound: z.number().finite().nullable(),
    unit: z.string().nullable(),
    status: z.enum(resultStatuses),
    /** The analyzer's own status letter as sent (ASTM R.9, HL7 OBX-11), trimmed; null when it sent none. */
    statusCode: z.string().nullable(),
    flags: z.array(z.string()),
    referenceRange: z.string().nullable(),
    qc: z.boolean(),
    source: provenanceSchema,
  })
  .superRefine((r, ctx) => {
    // Invariant 8: a consumer that reads only `value` must never take `<0.5` for 0.5.
    if (r.comparator !== null && r.value !== null)
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'a censored value has no number (its bound is `bound`)' });
    if ((r.comparator === null) !== (r.bound === null)) ctx.addIssue({ code: 'custom', path: ['bound'], message: 'comparator and bound come together' });
  });
export type KeyedResult = z.infer<typeof keyedResultSchema>;
export type KeyedResultInput = z.input<typeof keyedResultSchema>;

/** Renders an instant in the canonical key form, truncated (never rounded) to whole seconds. */
export function canonicalInstant(instant: Date | number): string {
  const ms = typeof instant === 'number' ? instant : instant.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('invalid instant');
  const truncated = new Date(Math.floor(ms / 1000) * 1000);
  return truncated.toISOString().slice(0, 19) + '+00:00';
}

/** SHA-256 hex of `accession|LOINC|instrument|resulted_at`, each part normalized as the central system does. */
export function dedupKey(parts: { accession: string; analyteLoinc: string; instrumentId: string; resultedAt: string | Date | number }): string {
  const accession = parts.accession.trim();
  const loinc = parts.analyteLoinc.trim().toUpperCase();
  const instrument = parts.instrumentId.trim();
  if (!accession || !loinc || !instrument) throw new RangeError('dedup key parts must not be empty');
  const at =
    typeof parts.resultedAt === 'string' && canonicalInstantPattern.test(parts.resultedAt)
      ? parts.resultedAt
      : canonicalInstant(typeof parts.resultedAt === 'string' ? Date.parse(parts.resultedAt) : parts.resultedAt);
  // One-shot hashes (here and below): ingest computes three per result, and a Hash object each costs as much again.
  return hash('sha256', `${accession}|${loinc}|${instrument}|${at}`);
}

/** Fixed namespace for record ids (a UUIDv4 drawn once for labgate; never change it: LIMS resources are addressed by it). */
export const RECORD_ID_NAMESPACE = '8f0c6f2e-3b1d-4f7a-9a51-2c4e6d7b9e10';

/** RFC 9562 UUIDv5 (SHA-1, name-based) of `name` in `namespace`. */
export function uuidV5(name: string, namespace: string = RECORD_ID_NAMESPACE): string {
  const hex = hash('sha1', Buffer.concat([namespaceBytes(namespace), Buffer.from(name, 'utf8')]));
  // Version 5 in the high nibble of byte 6, the RFC 9562 variant in the top bits of byte 8.
  const version = ((parseInt(hex.slice(12, 14), 16) & 0x0f) | 0x50).toString(16);
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${version}${hex.slice(14, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

let lastNamespace: { text: string; bytes: Buffer } | null = null;

function namespaceBytes(namespace: string): Buffer {
  if (lastNamespace?.text === namespace) return lastNamespace.bytes;
  const bytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (bytes.length !== 16) throw new RangeError('namespace must be a UUID');
  lastNamespace = { text: namespace, bytes };
  return bytes;
}

/** The id downstream systems know a result by: UUIDv5 of its dedup key, stable across a rebuilt gateway. */
export function recordId(key: string): string {
  return uuidV5(key);
}

/** A result as an earlier labgate stored it: without `bound` and `statusCode`, and `<0.5` possibly with value 0.5. */
export type StoredKeyedResult = Omit<KeyedResult, 'bound' | 'statusCode'> & Partial<Pick<KeyedResult, 'bound' | 'statusCode'>>;

/**
 * A stored result in today's form, fields in schema order: a censored value's number moves to `bound` (labgate once
 * stored `<0.5` with value 0.5), and a status letter it did not keep is null.
 */
export function upgradeStoredResult(r: StoredKeyedResult): KeyedResult {
  const censored = r.comparator !== null;
  return {
    accession: r.accession,
    analyteLoinc: r.analyteLoinc,
    instrumentId: r.instrumentId,
    resultedAt: r.resultedAt,
    valueText: r.valueText,
    value: censored ? null : r.value,
    comparator: r.comparator,
    bound: censored ? (r.bound ?? r.value) : null,
    unit: r.unit,
    status: r.status,
    statusCode: r.statusCode ?? null,
    flags: r.flags,
    referenceRange: r.referenceRange,
    qc: r.qc,
    source: r.source,
  };
}

/** The clinical content two results must share to be a replay rather than a conflict (invariant 4). */
export function clinicalContent(r: KeyedResult): string {
  // A censored value's number is its bound; a version stored before censored values lost their `value` compares alike.
  const value = r.comparator === null ? r.value : null;
  return JSON.stringify([r.valueText.trim(), value, r.comparator, r.unit ?? null, r.status, [...r.flags].sort()]);
}

/** Digest of the clinical content; equal digests under one key mean a replay. */
export function clinicalDigest(r: KeyedResult): string {
  return hash('sha256', clinicalContent(r));
}
