// One HL7 message from bytes to what the store journals: charset, parse, then ORU normalization.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import { defaultDelimiters, type Delimiters } from './delimiters.js';
import { readHeader, type MessageHeader } from './header.js';
import type { Hl7Options } from './options.js';
import { normalizeOru } from './oru.js';
import { parseMessage, type Hl7Message } from './parse.js';

/** A decoded message plus what its acknowledgment needs. `header` is undefined when no MSH could be read. */
export interface Hl7Decoding {
  kind: 'results' | 'other' | 'invalid';
  decoded: DecodedMessage;
  delimiters: Delimiters;
  header: MessageHeader | undefined;
  charset: 'utf8' | 'latin1';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes one message's payload (no MLLP bytes). Wire data never throws: a bad message is a rejection. */
export function decodeHl7Message(raw: Buffer, profile: InstrumentProfile, options: Hl7Options): Hl7Decoding {
  const read = readMessage(raw, options);
  if (read.kind === 'invalid') return read.decoding;
  // Chapter 7: ORU carries observations; anything else (QC, status, queries) is journaled and acknowledged only.
  if (read.decoding.header!.messageType !== 'ORU') return read.decoding;
  return { ...read.decoding, kind: 'results', decoded: normalizeOru(read.message, profile, options) };
}

/**
 * What answering a message needs without normalizing its results: its header and delimiters, or why it is not a
 * message. For a block that is not one, and for a message whose decoding failed (its answer still names it).
 */
export function undecodedMessage(raw: Buffer, options: Pick<Hl7Options, 'charset'>): Hl7Decoding {
  return readMessage(raw, options).decoding;
}

type Read = { kind: 'invalid'; decoding: Hl7Decoding } | { kind: 'message'; decoding: Hl7Decoding; message: Hl7Message };

function readMessage(raw: Buffer, options: Pick<Hl7Options, 'charset'>): Read {
  const { text, charset } = decodeText(raw, options.charset);
  const parsed = parseMessage(text);
  if (parsed.kind === 'invalid') {
    const decoded = { results: [], rejections: [{ reason: `not an HL7 message: ${parsed.reason}` }] };
    return { kind: 'invalid', decoding: { kind: 'invalid', decoded, delimiters: defaultDelimiters, header: undefined, charset } };
  }
  const { message } = parsed;
  const decoding: Hl7Decoding = {
    kind: 'other',
    decoded: { results: [], rejections: [] },
    delimiters: message.delimiters,
    header: readHeader(message),
    charset,
  };
  return { kind: 'message', decoding, message };
}

function decodeText(raw: Buffer, charset: Hl7Options['charset']): { text: string; charset: 'utf8' | 'latin1' } {
  if (charset === 'latin1') return { text: raw.toString('latin1'), charset };
  if (charset === 'utf8') return { text: raw.toString('utf8'), charset };
  try {
    return { text: utf8.decode(raw), charset: 'utf8' };
  } catch {
    return { text: raw.toString('latin1'), charset: 'latin1' };
  }
}
