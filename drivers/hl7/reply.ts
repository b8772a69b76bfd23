// What the runner writes back for one message: acknowledgments built per outcome, encoded in the message's charset
// (encode.ts) and MLLP-framed.
import type { Charset } from '../../src/charset.js';
import { acknowledgmentCodes, ackSegments, type AckOutcome } from './ack.js';
import { defaultDelimiters, type Delimiters } from './delimiters.js';
import { encodeMessage, type SegmentValue } from './encode.js';
import { readHeader, type MessageHeader } from './header.js';
import type { Hl7Decoding } from './message.js';
import { frameFor, type Framing } from './framing.js';
import type { Hl7Options } from './options.js';
import { parseMessage } from './parse.js';

/** Wraps one encoded payload in an MLLP block. */
export function mllpFrame(payload: Buffer): Buffer {
  return frameFor('mllp', payload);
}

/** Framed messages to write, the characters replaced on the way, and the messages refused (their reasons). */
export interface Replies {
  frames: Buffer[];
  substituted: number;
  refused: string[];
}

/** Encodes and frames messages for an instrument (encode.ts); what cannot be written is refused, not sent. */
export function framed(messages: readonly (readonly SegmentValue[])[], d: Delimiters, charset: Charset, framing: Framing = 'mllp'): Replies {
  const out: Replies = { frames: [], substituted: 0, refused: [] };
  for (const segments of messages) {
    const encoded = encodeMessage(segments, d, charset);
    if (encoded.kind === 'refused') out.refused.push(encoded.reason);
    else {
      out.frames.push(frameFor(framing, encoded.payload));
      out.substituted += encoded.substituted;
    }
  }
  return out;
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
export function repliesFor(decoding: Hl7Decoding, outcome: AckOutcome, now: number, options: Hl7Options): Replies {
  return replies(decoding.header ?? emptyHeader, decoding.delimiters, outcome, now, options, decoding.charset);
}

/** The framed refusal (AR, or CR in enhanced mode) of a message too large to buffer, from its first bytes. */
export function refusalFor(head: Buffer, length: number, now: number, options: Hl7Options): Replies {
  const parsed = parseMessage(head.toString('latin1').split(/\r|\n/)[0] ?? '');
  const header = parsed.kind === 'message' ? readHeader(parsed.message) : emptyHeader;
  const d = parsed.kind === 'message' ? parsed.message.delimiters : defaultDelimiters;
  const reason = `message of ${length}+ bytes exceeds the ${options.maxMessageBytes}-byte limit`;
  return replies(header, d, { kind: 'refused', reason }, now, options, 'latin1');
}

function replies(header: MessageHeader, d: Delimiters, outcome: AckOutcome, now: number, options: Hl7Options, charset: Charset): Replies {
  const reasons =
    outcome.kind === 'committed' ? outcome.rejections.map((r) => (r.analyzerCode ? `${r.analyzerCode}: ${r.reason}` : r.reason)) : [outcome.reason];
  const acks = acknowledgmentCodes(header, outcome, options.partialRejectionAck).map((code) =>
    ackSegments(header, code, reasons, now, options.sendingApplication),
  );
  return framed(acks, d, charset, options.framing);
}
