// Bytes that arrive while a message's commit is outstanding are held, in order, until its outcome is known;
// and no message, nor what waits behind it, may hold more than MAX_MESSAGE_BYTES (a babbling line must not
// exhaust memory).
import { append, items, type Chain } from './chain.js';

/** The most bytes one message may hold; beyond it the message is discarded. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Bytes held until a commit's outcome, and how many had to be dropped because the inbox was full. */
export interface Inbox {
  readonly chunks: Chain<Buffer>;
  readonly bytes: number;
  readonly dropped: number;
}

/** Nothing held. */
export const emptyInbox: Inbox = { chunks: null, bytes: 0, dropped: 0 };

/** The inbox with `data` appended, or `data` counted as dropped when it would exceed MAX_MESSAGE_BYTES. */
export function hold(inbox: Inbox, data: Buffer): Inbox {
  if (data.length === 0) return inbox;
  if (inbox.bytes + data.length > MAX_MESSAGE_BYTES) return { ...inbox, dropped: inbox.dropped + data.length };
  return { chunks: append(inbox.chunks, data), bytes: inbox.bytes + data.length, dropped: inbox.dropped };
}

/** An inbox holding the rest of a chunk. */
export function holdRest(data: Buffer): Inbox {
  return data.length === 0 ? emptyInbox : { chunks: append(null, data), bytes: data.length, dropped: 0 };
}

/** The held chunks, oldest first. */
export function heldChunks(inbox: Inbox): Buffer[] {
  return items(inbox.chunks);
}
