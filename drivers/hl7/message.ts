// One HL7 message from bytes to what the store journals: charset, parse, then the results of the structures the driver
// reads. Any other message is journaled and rejected with its type, so a person sees it and can reprocess it later.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import { defaultDelimiters, type Delimiters } from './delimiters.js';
import { readHeader, type MessageHeader } from './header.js';
import type { Hl7Options } from './options.js';
import type { ResultStructure } from './groups.js';
import { normalizeOru } from './oru.js';
import { queryDialect, readHl7Query, type QueryDialect } from './query.js';
import { parseMessage, type Hl7Message } from './parse.js';

/** A decoded message plus what its acknowledgment needs. `header` is undefined when no MSH could be read. */
export interface Hl7Decoding {
  kind: 'results' | 'query' | 'other' | 'invalid';
  decoded: DecodedMessage;
  delimiters: Delimiters;
  header: MessageHeader | undefined;
  charset: 'utf8' | 'latin1';
  /** The parsed message of a host query, for its answer (the QRD/QRF or QPD it echoes). */
  message?: Hl7Message;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes one message's payload (no MLLP bytes). Wire data never throws: a bad message is a rejection. */
export function decodeHl7Message(raw: Buffer, profile: InstrumentProfile, options: Hl7Options): Hl7Decoding {
  const read = readMessage(raw, options);
  if (read.kind === 'invalid') return read.decoding;
  const header = read.decoding.header!;
  const structure = resultStructure(header);
  const dialect = queryDialect(header);
  if (dialect !== undefined) {
    const queries = [readHl7Query(read.message, dialect)];
    const refusal = queryRefusal(dialect, options);
    const rejections = refusal === null ? [] : [{ reason: refusal }];
    return { ...read.decoding, kind: 'query', message: read.message, decoded: { results: [], rejections, queries } };
  }
  if (structure === undefined) {
    const reason = `message type ${messageTypeText(header)} is not read`;
    return { ...read.decoding, decoded: { results: [], rejections: [{ reason }] } };
  }
  return { ...read.decoding, kind: 'results', decoded: normalizeOru(read.message, profile, options, structure) };
}

/** Why a host query is journaled but not answered (this instrument answers no queries, or in the other dialect), or null. */
export function queryRefusal(dialect: QueryDialect, options: Pick<Hl7Options, 'orders'>): string | null {
  if (!options.orders.query) return `host query ${dialect} not answered: this instrument's options.orders.query is off`;
  if (dialectOf[options.orders.dialect] !== dialect) return `host query ${dialect} not answered: this instrument's orders dialect is ${options.orders.dialect}`;
  return null;
}

const dialectOf: Record<Hl7Options['orders']['dialect'], QueryDialect> = { 'display-query': 'QRY^Q02', law: 'QBP^Q11' };

/** The result structure of a message by MSH-9: every ORU as R01 (its only result event), OUL^R21 and OUL^R22. */
export function resultStructure(header: Pick<MessageHeader, 'messageType' | 'triggerEvent'>): ResultStructure | undefined {
  if (header.messageType === 'ORU') return 'ORU_R01';
  if (header.messageType === 'OUL' && header.triggerEvent === 'R21') return 'OUL_R21';
  if (header.messageType === 'OUL' && header.triggerEvent === 'R22') return 'OUL_R22';
  return undefined;
}

/** MSH-9 as a person reads it: `OUL^R21`, or the type alone. */
export function messageTypeText(header: Pick<MessageHeader, 'messageType' | 'triggerEvent'>): string {
  const type = header.messageType || '(none)';
  return header.triggerEvent ? `${type}^${header.triggerEvent}` : type;
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
