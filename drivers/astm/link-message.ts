// The message a framed transfer is assembling: the raw bytes it will be journaled with (the ENQ that opened
// the transfer, then each accepted frame as received), its frame texts, and what its text says about its end.
// Adding a frame costs that frame's bytes: nothing earlier is copied or scanned again.
import { append, items, type Chain } from './chain.js';
import { addText, endsWithL, noRecords, type RecordEnd } from './record-end.js';

/** A message in progress. Refused frames are not part of it: the sender retransmits them. */
export interface MessageSoFar {
  readonly raw: Chain<Buffer>;
  readonly bytes: number;
  readonly texts: Chain<Buffer>;
  readonly frames: number;
  readonly end: RecordEnd;
  /** The last accepted frame ended with ETX. */
  readonly final: boolean;
  /** Frames refused since the message began (reported if the transfer ends without it). */
  readonly refused: number;
}

/** An accepted frame: its bytes as received and its text (a view into them). */
export interface AcceptedFrame {
  frameNumber: number | null;
  bytes: Buffer;
  text: Buffer;
  final: boolean;
}

/** A message with no frame yet; `opening` is the ENQ when it is the first of a transfer. */
export function newMessage(opening?: Buffer): MessageSoFar {
  return { raw: opening ? append(null, opening) : null, bytes: opening?.length ?? 0, texts: null, frames: 0, end: noRecords, final: false, refused: 0 };
}

/** The message with one more accepted frame. */
export function withFrame(m: MessageSoFar, f: AcceptedFrame): MessageSoFar {
  return {
    raw: append(m.raw, f.bytes),
    bytes: m.bytes + f.bytes.length,
    texts: append(m.texts, f.text),
    frames: m.frames + 1,
    end: addText(m.end, f.text),
    final: f.final,
    refused: m.refused,
  };
}

/** The message after one more frame was refused. */
export function withRefusal(m: MessageSoFar): MessageSoFar {
  return { ...m, refused: m.refused + 1 };
}

/** LIS2-A2: a message is complete at the ETX frame whose text ends with the L terminator record. */
export function isComplete(m: MessageSoFar): boolean {
  return m.final && endsWithL(m.end);
}

/** The message's raw bytes (journaled) and its reassembled text (decoded). */
export function assemble(m: MessageSoFar): { raw: Buffer; text: Buffer } {
  return { raw: Buffer.concat(items(m.raw), m.bytes), text: Buffer.concat(items(m.texts)) };
}
