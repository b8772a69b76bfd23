// The body labgate PUTs to the LIMS: a versioned envelope around one result, and the idempotency key derived from it.
// Everything here is a pure function of the stored payload and the gateway id, so a retry, a replay or a rebuilt
// gateway with the same id sends byte-identical bodies under the same key. The shape is documented in LIMS.md.
import { sha256Hex, type ResultPayload } from '../payload.js';

/**
 * The one envelope shape labgate sends, named in the body and the `X-Envelope-Version` header. Adding a field keeps
 * the version (a reader ignores fields it does not know); renaming, removing or retyping one would be a new version.
 */
export const ENVELOPE_VERSION = '1';

/** The JSON document the LIMS stores for one result. */
export interface LimsEnvelope {
  envelopeVersion: string;
  recordId: string;
  dedupKey: string;
  result: {
    accession: string;
    analyteLoinc: string;
    instrumentId: string;
    resultedAt: string;
    valueText: string;
    /** A number only when the analyzer sent exactly one: never for a censored value (`<0.5`). */
    value: number | null;
    /** With `bound`, only for a censored value: `<0.5` is comparator `<`, bound 0.5. */
    comparator: string | null;
    bound: number | null;
    unit: string | null;
    /** final, preliminary, correction, cannot-be-done, entered-in-error, deleted or unknown (src/result.ts). */
    status: string;
    /** The analyzer's own status letter (ASTM R.9, HL7 OBX-11), null when it sent none. */
    statusCode: string | null;
    flags: string[];
    referenceRange: string | null;
    qc: boolean;
  };
  provenance: {
    gatewayId: string;
    instrument: string;
    analyzerCode: string;
    capturedAt: string;
    /** Present (true) only when the gateway's clock was not synchronised at receipt: capturedAt may be far off. */
    capturedAtUnreliable?: true;
    captureSha256: string;
  };
}

/** Builds the envelope for a stored payload. */
export function buildEnvelope(payload: ResultPayload, gatewayId: string): LimsEnvelope {
  const r = payload.result;
  return {
    envelopeVersion: ENVELOPE_VERSION,
    recordId: payload.recordId,
    dedupKey: payload.dedupKey,
    result: {
      accession: r.accession,
      analyteLoinc: r.analyteLoinc,
      instrumentId: r.instrumentId,
      resultedAt: r.resultedAt,
      valueText: r.valueText,
      value: r.value,
      comparator: r.comparator,
      // `?? null`: a payload stored before these fields existed has neither.
      bound: r.bound ?? null,
      unit: r.unit,
      status: r.status,
      statusCode: r.statusCode ?? null,
      flags: [...r.flags],
      referenceRange: r.referenceRange,
      qc: r.qc,
    },
    provenance: {
      gatewayId,
      instrument: r.instrumentId,
      analyzerCode: r.source.analyzerCode,
      capturedAt: payload.capture.receivedAt,
      ...(payload.capture.clock === 'unsynchronised' ? { capturedAtUnreliable: true as const } : {}),
      captureSha256: payload.capture.rawSha256,
    },
  };
}

/** Deterministic idempotency key: the record id and the body digest, so a changed body never reuses a key. */
export function idempotencyKey(recordId: string, body: string): string {
  return `${recordId}:${sha256Hex(body).slice(0, 32)}`;
}

/** RFC 8941 sf-string: quoted, with `\` and `"` escaped; only printable ASCII is allowed. */
export function sfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new RangeError('sf-string allows printable ASCII only');
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The clinical content of a stored LIMS document in the same shape as `clinicalContent` in result.ts, or null
 * when the document has no recognisable result. Two documents with equal content mean our write already landed.
 */
export function limsClinicalContent(document: unknown): string | null {
  if (typeof document !== 'object' || document === null) return null;
  const r = (document as { result?: unknown }).result;
  if (typeof r !== 'object' || r === null) return null;
  const f = r as Record<string, unknown>;
  if (typeof f.valueText !== 'string' || !Array.isArray(f.flags)) return null;
  const flags = f.flags.filter((x): x is string => typeof x === 'string').sort();
  // As clinicalContent: a censored value's number is its bound (documents written before `bound` held it as value).
  const value = f.comparator === null || f.comparator === undefined ? (f.value ?? null) : null;
  return JSON.stringify([f.valueText.trim(), value, f.comparator ?? null, f.unit ?? null, f.status ?? null, flags]);
}
