// ORU^R01, OUL^R21 and OUL^R22 (v2.3 to v2.5.1) to keyed results: one result per OBX of an order (HL7 v2.5.1
// Chapter 7, 7.4.2 OBX), with the same keys, statuses and rejections whichever structure carried it.
// The key's instrument is the configured instrument; OBX-18 equipment is provenance only.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { lookupAnalyte } from '../../src/config/mapping.js';
import type { DecodedMessage, Rejection } from '../../src/message.js';
import { canonicalInstant, keyedResultSchema, type KeyedResult } from '../../src/result.js';
import { unescapeText } from './escape.js';
import type { FieldLocation } from '../../src/field-location.js';
import { formatFieldLocation, hl7Grammar } from '../../src/field-location.js';
import { orderGroups, segmentFor, type OrderGroup, type ResultStructure } from './groups.js';
import type { Hl7Options } from './options.js';
import { componentsOf, holdsParts, rawAt, rawField, repeatedValues, valueAt, type Hl7Message, type Segment } from './parse.js';
import { readObxStatus } from './status.js';
import { readHl7Time, type Hl7Instant } from './time.js';
import { readObxValue } from './value.js';

/** Turns every result OBX of a message of `structure` into a keyed result or a rejection with its reason. */
export function normalizeOru(message: Hl7Message, profile: InstrumentProfile, options: Hl7Options, structure: ResultStructure = 'ORU_R01'): DecodedMessage {
  const out: DecodedMessage = { results: [], rejections: [] };
  const msh = message.segments[0]!;
  const groups = orderGroups(message.segments, structure);
  const qc = options.qc !== undefined && isQc(message, groups, options.qc);
  // The OBX of one sample usually share a time; reading a zone's offset is the costliest step here.
  const times = new Map<string, Hl7Instant>();
  for (const group of groups) {
    for (const obx of group.observations) {
      const one = normalizeObx({ message, group, obx, msh, profile, options, qc, times });
      if (one === undefined) continue;
      if ('reason' in one) out.rejections.push(one);
      else out.results.push(one);
    }
  }
  return out;
}

interface ObxContext {
  message: Hl7Message;
  group: OrderGroup;
  obx: Segment;
  msh: Segment;
  profile: InstrumentProfile;
  options: Hl7Options;
  qc: boolean;
  times: Map<string, Hl7Instant>;
}

function normalizeObx(c: ObxContext): KeyedResult | Rejection | undefined {
  const d = c.message.delimiters;
  const valueType = valueAt(c.obx, d, { field: 2, component: 1, subcomponent: 1 }).trim().toUpperCase();
  if (c.options.skipValueTypes.includes(valueType)) return undefined;
  const code = analyzerCode(c);
  if (code !== '' && c.options.skipCodes.includes(code)) return undefined;
  const accession = readAccession(c);
  const reject = (reason: string): Rejection => ({
    reason,
    ...(code ? { analyzerCode: code, observed: observed(c) } : {}),
    ...(typeof accession === 'string' ? { accession } : {}),
  });
  if (code === '') return reject(`OBX-${valueAt(c.obx, d, { field: 1, component: 1, subcomponent: 1 })} has no test code in ${refs(c.options.code)}`);
  if (accession === undefined) return reject(`no accession in ${refs(c.options.accession)}`);
  if (typeof accession === 'object') return reject(accession.reason);
  const status = readObxStatus(unescapeText(rawField(c.obx, 11), d), c.options.missingStatus);
  if (status.kind === 'rejected') return reject(status.reason);
  const time = resultTime(c);
  if (time.kind !== 'instant') return reject(time.reason);
  const unit = readUnit(c);
  const mapped = lookupAnalyte(c.profile.mapping, code, unit === '' ? null : unit);
  if (mapped.kind === 'rejected') return reject(mapped.reason);
  const value = readObxValue(c.obx, d, valueType);
  if (value.kind === 'rejected') return reject(value.reason);
  const equipment = c.options.equipment === null ? '' : firstValue(c, [c.options.equipment]);
  const parsed = keyedResultSchema.safeParse({
    accession,
    analyteLoinc: mapped.loinc,
    instrumentId: c.profile.id,
    resultedAt: canonicalInstant(time.epochMs),
    ...value.value,
    unit: mapped.unit ?? null,
    status: status.status,
    statusCode: status.statusCode,
    flags: repeatedValues(c.obx, d, 8)
      .map((f) => f.trim())
      .filter((f) => f !== ''),
    referenceRange: valueAt(c.obx, d, { field: 7, component: 1, subcomponent: 1 }).trim() || null,
    qc: mapped.qc || c.qc,
    source: { gatewayId: c.profile.gatewayId, driver: 'hl7', analyzerCode: code, captureId: null, ...(equipment ? { equipment } : {}) },
  });
  if (!parsed.success) return reject(`result is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
  return parsed.data;
}

// What the analyzer sent beside a rejected code (OBX-5 as text, OBX-6), for the codes the status page lists.
function observed(c: ObxContext): { value: string; unit: string | null } {
  return { value: unescapeText(rawField(c.obx, 5), c.message.delimiters).trim(), unit: readUnit(c) || null };
}

// OBX-6 (CE: identifier^text^system) component 1 by default; the whole field for units written with a bare `^`.
function readUnit(c: ObxContext): string {
  return firstValue(c, [c.options.unit]);
}

function analyzerCode(c: ObxContext): string {
  const d = c.message.delimiters;
  for (const ref of c.options.code) {
    const seg = segmentFor(ref.segment, c.group, c.obx, c.msh);
    if (!seg) continue;
    if (c.options.codingSystem !== undefined) {
      // CE/CWE: identifier^text^system^alternate identifier^alternate text^alternate system (Chapter 2A, CE and CWE data types).
      const comps = componentsOf(rawAt(seg, d, { field: ref.field }), d);
      const at = (i: number): string => valueAt(seg, d, { field: ref.field, component: i, subcomponent: 1 }).trim();
      if (comps.length >= 3 && at(3) === c.options.codingSystem && at(1) !== '') return at(1);
      if (comps.length >= 6 && at(6) === c.options.codingSystem && at(4) !== '') return at(4);
      continue;
    }
    const code = valueAt(seg, d, ref).trim();
    if (code !== '') return code;
  }
  return '';
}

// The accession is the key's identity: a location that holds several parts (`OBR-3` when the analyzer sends
// `123^LAB`) is ambiguous and rejects the result, naming the part to configure, rather than keying it on both.
function readAccession(c: ObxContext): string | { reason: string } | undefined {
  for (const ref of c.options.accession) {
    const seg = segmentFor(ref.segment, c.group, c.obx, c.msh);
    const v = seg ? valueAt(seg, c.message.delimiters, ref).trim() : '';
    if (v === '') continue;
    if (holdsParts(seg!, c.message.delimiters, ref))
      return { reason: `accession location ${refText(ref)} holds several parts: name one (e.g. ${refText(ref)}.1)` };
    return v;
  }
  return undefined;
}

function firstValue(c: ObxContext, list: readonly FieldLocation[]): string {
  for (const ref of list) {
    const seg = segmentFor(ref.segment, c.group, c.obx, c.msh);
    const v = seg ? valueAt(seg, c.message.delimiters, ref).trim() : '';
    if (v !== '') return v;
  }
  return '';
}

function resultTime(c: ObxContext): { kind: 'instant'; epochMs: number } | { kind: 'none'; reason: string } {
  for (const ref of c.options.time) {
    const seg = segmentFor(ref.segment, c.group, c.obx, c.msh);
    const t = seg ? timeOf(c, valueAt(seg, c.message.delimiters, ref)) : { kind: 'absent' as const };
    if (t.kind === 'instant') return t;
    if (t.kind === 'rejected') return { kind: 'none', reason: `${refText(ref)} ${t.reason}` };
  }
  return { kind: 'none', reason: `no result time in ${refs(c.options.time)}` };
}

function timeOf(c: ObxContext, text: string): Hl7Instant {
  let t = c.times.get(text);
  if (t === undefined) {
    t = readHl7Time(text, c.profile.timezone);
    c.times.set(text, t);
  }
  return t;
}

function isQc(message: Hl7Message, groups: readonly OrderGroup[], rule: NonNullable<Hl7Options['qc']>): boolean {
  const msh = message.segments[0]!;
  const seg = rule.field.segment === 'MSH' ? msh : groups.map((g) => segmentFor(rule.field.segment, g, undefined, msh)).find(Boolean);
  return seg !== undefined && rule.equals.includes(valueAt(seg, message.delimiters, rule.field).trim());
}

function refText(ref: FieldLocation): string {
  return formatFieldLocation(ref, hl7Grammar);
}

function refs(list: readonly FieldLocation[]): string {
  return list.map(refText).join(', ');
}
