// One stored result as one FHIR R4 Observation (the mapping table is in docs/interfaces.md, "The FHIR server"). Pure: the
// same payload and options give the same document, so a replay sends the same content. A result says no more than
// the analyzer said: a unit that is not UCUM is never given a UCUM code, a flag that is not an HL7 v3
// ObservationInterpretation code travels as text, a censored value is a comparator and its bound, never a number.
import type { ResultPayload } from '../payload.js';
import { upgradeStoredResult, type KeyedResult, type ResultStatus } from '../result.js';
import { isUcum } from './fhir-ucum.js';

/** The naming systems of an Observation (the `sinks.fhir` keys of the same names). */
export interface ObservationSystems {
  /** System of the identifier whose value is the dedup key: the Observation's identity. */
  identifierSystem: string;
  /** System of the accession (the specimen's identifier), e.g. the hospital's accession number namespace. */
  specimenSystem: string;
  /** System of the instrument id (the device's identifier). */
  deviceSystem: string;
  /** Prefix of the per-instrument system of the analyzer's own test codes: `{prefix}:{instrument}`. */
  analyzerCodeSystem: string;
}

/** Everything besides the payload that shapes the document. */
export interface ObservationOptions extends ObservationSystems {
  /** Analyzer unit text → UCUM code, for units that are UCUM in meaning but not in spelling (`x10^3/uL`). */
  ucumUnits: Readonly<Record<string, string>>;
}

/** The R4 Observation as labgate writes it (the subset of fields it sets). */
export interface FhirObservation {
  resourceType: 'Observation';
  id?: string;
  meta?: { tag: FhirCoding[] };
  extension?: { url: string; valueCode: string }[];
  identifier: { system: string; value: string }[];
  status: string;
  category: { coding: FhirCoding[] }[];
  code: { coding: FhirCoding[] };
  effectiveDateTime: string;
  issued?: string;
  specimen: { identifier: { system: string; value: string }; display: string };
  device: { identifier: { system: string; value: string }; display: string };
  valueQuantity?: FhirQuantity;
  valueString?: string;
  interpretation?: { coding?: FhirCoding[]; text?: string }[];
  referenceRange?: { low?: FhirQuantity; high?: FhirQuantity; text: string }[];
}
/** An R4 Coding. */
export type FhirCoding = { system: string; code: string; display?: string };
/** An R4 Quantity. */
export type FhirQuantity = { value?: number; comparator?: string; unit?: string; system?: string; code?: string };

/** URL of the extension that keeps the analyzer's own status letter (ASTM R.9, HL7 OBX-11) as it was sent. */
export const ANALYZER_STATUS_EXTENSION = 'urn:labgate:fhir:extension:analyzer-result-status';
/** The meta.tag of a quality-control result (only sent when the sink takes them). */
export const QC_TAG: FhirCoding = { system: 'urn:labgate:fhir:tag', code: 'qc', display: 'Quality control result, not a patient result' };
const UCUM = 'http://unitsofmeasure.org';
const LOINC = 'http://loinc.org';
const V3_INTERPRETATION = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';
const LABORATORY = { system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory', display: 'Laboratory' };

/** R4 observation-status for each normalized status; the analyzer's own letter travels beside it (extension). */
export const observationStatus = {
  final: 'final',
  preliminary: 'preliminary',
  // A correction replaces a final result (HL7 C, and A "amended", which R4 puts above `corrected`).
  correction: 'corrected',
  'cannot-be-done': 'cancelled',
  'entered-in-error': 'entered-in-error',
  // HL7 D deletes an earlier result; R4 has no "deleted": the record should never have existed, the letter says D.
  deleted: 'entered-in-error',
  unknown: 'unknown',
} as const satisfies Record<ResultStatus, string>;

// v3 ObservationInterpretation codes an analyzer flag (ASTM R.7, HL7 OBX-8 table 0078) can be, as they are spelt.
const INTERPRETATIONS = new Set([
  '<',
  '>',
  'A',
  'AA',
  'AC',
  'B',
  'CAR',
  'Carrier',
  'D',
  'DET',
  'E',
  'EX',
  'EXP',
  'H',
  'H>',
  'HH',
  'HM',
  'HU',
  'HX',
  'I',
  'IE',
  'IND',
  'L',
  'L<',
  'LL',
  'LU',
  'LX',
  'MS',
  'N',
  'NCL',
  'ND',
  'NEG',
  'NR',
  'NS',
  'OBX',
  'POS',
  'QCF',
  'R',
  'RR',
  'S',
  'SDD',
  'SYN-R',
  'SYN-S',
  'TOX',
  'U',
  'UNE',
  'VS',
  'W',
  'WR',
]);

/** The Observation for a stored payload. */
export function toObservation(payload: ResultPayload, o: ObservationOptions): FhirObservation {
  // A payload stored before `bound` and `statusCode` existed reads as today's result.
  const r = upgradeStoredResult(payload.result);
  const ucum = unitCode(r.unit, o.ucumUnits);
  const raw = fhirCode(r.statusCode ?? '');
  const analyzerCode = fhirCode(r.source.analyzerCode);
  const accession = fhirString(r.accession) || '(none)';
  return {
    resourceType: 'Observation',
    ...(r.qc ? { meta: { tag: [QC_TAG] } } : {}),
    ...(raw ? { extension: [{ url: ANALYZER_STATUS_EXTENSION, valueCode: raw }] } : {}),
    identifier: [{ system: o.identifierSystem, value: payload.dedupKey }],
    status: observationStatus[r.status],
    category: [{ coding: [LABORATORY] }],
    code: {
      coding: [
        { system: LOINC, code: fhirCode(r.analyteLoinc) },
        ...(analyzerCode ? [{ system: `${o.analyzerCodeSystem}:${r.instrumentId}`, code: analyzerCode }] : []),
      ],
    },
    // Both in R4's dateTime/instant form: the key's `+00:00` instant, and the capture's ISO-8601 UTC time.
    effectiveDateTime: r.resultedAt,
    // Not claimed when the gateway's clock was not synchronised at receipt: it could be years off.
    ...(payload.capture.clock === 'unsynchronised' ? {} : { issued: payload.capture.receivedAt }),
    specimen: { identifier: { system: o.specimenSystem, value: accession }, display: `Specimen ${accession}` },
    device: { identifier: { system: o.deviceSystem, value: r.instrumentId }, display: r.instrumentId },
    ...value(r, ucum),
    ...interpretation(r.flags),
    ...referenceRange(r.referenceRange, r.unit, ucum),
  };
}

/**
 * Text as an R4 string, which SHALL NOT hold characters below U+0020 but tab, CR and LF: each other control
 * character becomes its visible Control Pictures symbol (U+2400 + code), so nothing the analyzer sent is hidden
 * or dropped. Trimmed; empty when nothing visible is left (R4 strings must not be empty or blank).
 */
export function fhirString(text: string): string {
  // eslint-disable-next-line no-control-regex
  const visible = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0))).trim();
  return /\S/.test(visible) ? visible : '';
}

/** Text as an R4 code: a visible string whose inner whitespace is single spaces (`[^\s]+( [^\s]+)*`). */
function fhirCode(text: string): string {
  return fhirString(text).split(/\s+/).filter(Boolean).join(' ');
}

/** The UCUM code of a unit, or null when the unit is absent or not UCUM. */
function unitCode(unit: string | null, overrides: Readonly<Record<string, string>>): string | null {
  const text = unit?.trim() ?? '';
  if (!text) return null;
  // Own keys only: a unit spelt `toString` is not the object's method.
  if (Object.hasOwn(overrides, text)) return overrides[text]!;
  return isUcum(text) ? text : null;
}

function quantity(unit: string | null, ucum: string | null): FhirQuantity {
  return unit?.trim() && ucum ? { unit: fhirString(unit), system: UCUM, code: ucum } : {};
}

type Valued = Pick<FhirObservation, 'valueQuantity' | 'valueString'>;

function value(r: KeyedResult, ucum: string | null): Valued {
  const numeric = !r.unit?.trim() || ucum !== null;
  // A censored value (`<0.5`) is its comparator and bound (R4 Quantity.comparator), never a plain number.
  if (r.comparator !== null && r.bound !== null && numeric) return { valueQuantity: { value: r.bound, comparator: r.comparator, ...quantity(r.unit, ucum) } };
  if (r.comparator === null && r.value !== null && numeric) return { valueQuantity: { value: r.value, ...quantity(r.unit, ucum) } };
  const text = [fhirString(r.valueText), fhirString(r.unit ?? '')].filter(Boolean).join(' ');
  // R4 strings must not be empty: a result with no value at all (cannot be done) carries none.
  return text ? { valueString: text } : {};
}

function interpretation(flags: readonly string[]): Pick<FhirObservation, 'interpretation'> {
  const kept = flags.map(fhirString).filter(Boolean);
  if (kept.length === 0) return {};
  return { interpretation: kept.map((f) => (INTERPRETATIONS.has(f) ? { coding: [{ system: V3_INTERPRETATION, code: f }] } : { text: f })) };
}

const RANGE = /^\s*(-?\d+(?:\.\d+)?)\s*(?:-|–|to)\s*(-?\d+(?:\.\d+)?)\s*$/;

function referenceRange(text: string | null, unit: string | null, ucum: string | null): Pick<FhirObservation, 'referenceRange'> {
  const range = fhirString(text ?? '');
  if (!range) return {};
  const m = RANGE.exec(range);
  // Numbers only with a unit R4 can state (UCUM, or none); the analyzer's text is always kept beside them.
  if (!m || (Boolean(unit?.trim()) && ucum === null)) return { referenceRange: [{ text: range }] };
  const q = quantity(unit, ucum);
  return { referenceRange: [{ low: { value: Number(m[1]), ...q }, high: { value: Number(m[2]), ...q }, text: range }] };
}

/**
 * The clinical content of an Observation in one string: status, the analyzer's status letter, the value and the
 * interpretation. Equal strings mean our write already landed; anything else is somebody else's version.
 */
export function observationContent(document: unknown): string | null {
  if (typeof document !== 'object' || document === null) return null;
  const o = document as Partial<FhirObservation>;
  if (typeof o.status !== 'string') return null;
  const q = o.valueQuantity;
  const quantityText = q ? [q.comparator ?? '', q.value ?? null, q.unit ?? null, q.code ?? null] : null;
  const raw = (o.extension ?? []).find((e) => e.url === ANALYZER_STATUS_EXTENSION)?.valueCode ?? null;
  const interp = (o.interpretation ?? []).map((i) => i.coding?.map((c) => `${c.system}|${c.code}`).join(',') ?? `text:${i.text ?? ''}`).sort();
  return JSON.stringify([o.status, raw, quantityText, o.valueString ?? null, interp]);
}
