// What the runner writes back for one message: acknowledgments built per outcome, MLLP-framed.
import { acknowledgmentCodes, buildAck, type AckOutcome } from './ack.js';
import { defaultDelimiters, type Delimiters } from './delimiters.js';
import { readHeader, type MessageHeader } from './header.js';
import type { Hl7Decoding } from './message.js';
import { CR, FS, VT } from './mllp.js';
import type { Hl7Options } from './options.js';
import { parseMessage } from './parse.js';

/** Wraps one payload in an MLLP block. */
export function mllpFrame(payload: string, charset: 'utf8' | 'latin1' = 'latin1'): Buffer {
  return Buffer.concat([Buffer.from([VT]), Buffer.from(payload, charset), Buffer.from([FS, CR])]);
}

const emptyHeader: MessageHeader = {
  sendingApplication: '',
  sendingFacility: '',
  receivingApplication: '',
  receivingFacility: '',
  messageType: '',
  triggerEvent: '',
  controlId: '',
  processingId: '',
  version: '',
  acceptAckType: '',
  applicationAckType: '',
};

/** The framed acknowledgments for a decoded message and what became of it. */
export function repliesFor(decoding: Hl7Decoding, outcome: AckOutcome, now: number, options: Hl7Options): Buffer[] {
  return replies(decoding.header ?? emptyHeader, decoding.delimiters, outcome, now, options, decoding.charset);
}

/** The framed refusal (AR, or CR in enhanced mode) of a message too large to buffer, from its first bytes. */
export function refusalFor(head: Buffer, length: number, now: number, options: Hl7Options): Buffer[] {
  const parsed = parseMessage(head.toString('latin1').split(/\r|\n/)[0] ?? '');
  const header = parsed.kind === 'message' ? readHeader(parsed.message) : emptyHeader;
  const d = parsed.kind === 'message' ? parsed.message.delimiters : defaultDelimiters;
  const reason = `message of ${length}+ bytes exceeds the ${options.maxMessageBytes}-byte limit`;
  return replies(header, d, { kind: 'refused', reason }, now, options, 'latin1');
}

function replies(header: MessageHeader, d: Delimiters, outcome: AckOutcome, now: number, options: Hl7Options, charset: 'utf8' | 'latin1'): Buffer[] {
  const reasons =
    outcome.kind === 'committed' ? outcome.rejections.map((r) => (r.analyzerCode ? `${r.analyzerCode}: ${r.reason}` : r.reason)) : [outcome.reason];
  return acknowledgmentCodes(header, outcome, options.partialRejectionAck).map((code) =>
    mllpFrame(buildAck(header, d, code, reasons, now, options.sendingApplication), charset),
  );
}
