// Acknowledgments (HL7 v2.5.1 Chapter 2, 2.9.2 original mode, 2.9.3 enhanced mode; MSA and ERR segments; Tables 0008, 0155, 0357).
// Invariant 1: an accepting code (AA, CA) is only ever built from a `committed` outcome.
import type { Rejection } from '../../src/message.js';
import { components, text, type FieldValue, type SegmentValue } from './encode.js';
import type { MessageHeader } from './header.js';

/** What happened to a message, as far as the sender must be told. */
export type AckOutcome =
  { kind: 'committed'; results: number; rejections: readonly Rejection[] } | { kind: 'unavailable'; reason: string } | { kind: 'refused'; reason: string };

/** MSA-1 codes (HL7 Table 0008). */
export type AckCode = 'AA' | 'AE' | 'AR' | 'CA' | 'CE' | 'CR';

const ackTypes = ['AL', 'NE', 'ER', 'SU'];

/** The acknowledgments a message gets, in sending order (accept ack first in enhanced mode). */
export function acknowledgmentCodes(header: MessageHeader, outcome: AckOutcome, partialRejectionAck: 'AE' | 'AA'): AckCode[] {
  const app = applicationCode(outcome, partialRejectionAck);
  const accept = ackTypes.includes(header.acceptAckType) ? header.acceptAckType : '';
  const application = ackTypes.includes(header.applicationAckType) ? header.applicationAckType : '';
  // 2.9.3: enhanced mode when MSH-15 or MSH-16 is valued (with a Table 0155 value: some analyzers put
  // other things there, e.g. a result-type digit); otherwise the original mode's single ack.
  if (accept === '' && application === '') return [app];
  const out: AckCode[] = [];
  const commit: AckCode = outcome.kind === 'committed' ? 'CA' : outcome.kind === 'refused' ? 'CR' : 'CE';
  if (wanted(accept, commit === 'CA')) out.push(commit);
  // An uncommitted message was never processed by the application: its only answer is the commit one,
  // unless the sender asked for no accept acks at all.
  if (outcome.kind !== 'committed' && out.length > 0) return out;
  if (wanted(application, app === 'AA')) out.push(app);
  return out;
}

function applicationCode(outcome: AckOutcome, partialRejectionAck: 'AE' | 'AA'): AckCode {
  if (outcome.kind !== 'committed') return 'AR';
  if (outcome.rejections.length === 0) return 'AA';
  return outcome.results > 0 && partialRejectionAck === 'AA' ? 'AA' : 'AE';
}

// Table 0155: AL always, NE never, ER only on error/reject, SU only on success.
function wanted(type: string, success: boolean): boolean {
  return type === 'AL' || (type === 'ER' && !success) || (type === 'SU' && success);
}

/** The segments of one ACK answering `header` (written with the message's own delimiters by encode.ts). */
export function ackSegments(header: MessageHeader, code: AckCode, reasons: readonly string[], now: number, sendingApplication: string): SegmentValue[] {
  const version = header.version || '2.5';
  const trigger = header.triggerEvent || 'R01';
  const messageType: FieldValue = versionAtLeast(version, '2.3.1') ? components('ACK', trigger, 'ACK') : components('ACK', trigger);
  const msh = replyHeader(header, messageType, `${code[0]}${header.controlId}`, now, sendingApplication);
  const errorText = code === 'AA' || code === 'CA' ? '' : clip(reasons.join('; '), 80);
  const msaFields = [text(code), text(header.controlId)];
  // MSA-3 text is kept for the many analyzers that still display it (withdrawn only in v2.7).
  if (errorText !== '' && !versionAtLeast(version, '2.7')) msaFields.push(text(errorText));
  const segments = [msh, { id: 'MSA', fields: msaFields }];
  if (errorText !== '') segments.push(...reasons.slice(0, 10).map((r) => errSegment(r, version)));
  return segments;
}

/**
 * The MSH of a message answering `header`: its sender and receiver swapped, its processing id and version mirrored,
 * MSH-10 clipped to the 20 characters the field allows.
 */
export function replyHeader(header: MessageHeader, messageType: FieldValue, controlId: string, now: number, sendingApplication: string): SegmentValue {
  return {
    id: 'MSH',
    fields: [
      text(sendingApplication),
      text(header.receivingFacility),
      text(header.sendingApplication),
      text(header.sendingFacility),
      text(hl7Now(now)),
      text(''),
      messageType,
      text(clip(controlId, 20)),
      text(header.processingId || 'P'),
      text(header.version || '2.5'),
    ],
  };
}

// ERR: before v2.5 ERR-1 (ELD, code in component 4); from v2.5 ERR-3 code, ERR-4 severity, ERR-8 user message.
function errSegment(reason: string, version: string): SegmentValue {
  const code = ['207', 'Application internal error', 'HL70357'];
  if (!versionAtLeast(version, '2.5')) return { id: 'ERR', fields: [[[[''], [''], [''], code]]] };
  return { id: 'ERR', fields: [text(''), text(''), components(...code), text('E'), text(''), text(''), text(''), text(clip(reason, 250))] };
}

// Lengths count characters, so a cut never leaves half of a surrogate pair.
function clip(value: string, characters: number): string {
  return value.length <= characters ? value : Array.from(value).slice(0, characters).join('');
}

/** True when `version` (e.g. `2.3.1`) is at least `min`. */
export function versionAtLeast(version: string, min: string): boolean {
  const a = version.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const b = min.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

/** An instant as an HL7 DTM in UTC, to the second (`20241105101500+0000`). */
export function hl7Now(now: number): string {
  const iso = new Date(now).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}+0000`;
}
