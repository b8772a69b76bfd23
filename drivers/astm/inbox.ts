// Bytes that arrive while a message's commit is outstanding are held, in order, until its outcome is known;
// and no message, nor what waits behind it, may hold more than MAX_MESSAGE_BYTES, each held chunk charged CHUNK_COST
// beside its bytes (a babbling line must not exhaust memory, in large chunks or a byte at a time). The held chunks are a persistent queue: taking the oldest chunk, putting a chunk's unread rest
// back in front and appending behind each cost O(1) (amortized), so a backlog of thousands of messages, each
// completed and committed in turn, drains in time linear in its bytes, and a state handed to step() twice still
// gives the same answer twice.
import { append, type Chain } from './chain.js';

/** The most bytes one message may hold; beyond it the message is discarded. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** What holding one chunk costs beside its bytes (its Buffer and list node): a line read a byte at a time is charged for it. */
export const CHUNK_COST = 128;

/** Bytes held until a commit's outcome, and how many had to be dropped because the inbox was full. */
export interface Inbox {
  /** The oldest chunks, oldest first. */
  readonly front: Chain<Buffer>;
  /** The newer chunks, newest first (reversed into `front` once it runs out). */
  readonly back: Chain<Buffer>;
  readonly bytes: number;
  /** Chunks held: each costs CHUNK_COST of the MAX_MESSAGE_BYTES beside its bytes. */
  readonly chunks: number;
  readonly dropped: number;
}

/** Nothing held. */
export const emptyInbox: Inbox = { front: null, back: null, bytes: 0, chunks: 0, dropped: 0 };

/** The inbox with `data` appended, or `data` counted as dropped when it would exceed MAX_MESSAGE_BYTES. */
export function hold(inbox: Inbox, data: Buffer): Inbox {
  if (data.length === 0) return inbox;
  if (inbox.bytes + data.length + (inbox.chunks + 1) * CHUNK_COST > MAX_MESSAGE_BYTES) return { ...inbox, dropped: inbox.dropped + data.length };
  return { ...inbox, back: append(inbox.back, data), bytes: inbox.bytes + data.length, chunks: inbox.chunks + 1 };
}

/** The inbox with `data` (the unread rest of the chunk it was taken from) back before its other chunks. */
export function holdFirst(inbox: Inbox, data: Buffer): Inbox {
  if (data.length === 0) return inbox;
  return { ...inbox, front: { item: data, before: inbox.front }, bytes: inbox.bytes + data.length, chunks: inbox.chunks + 1 };
}

/** The oldest held chunk and the inbox without it; null when nothing is held. */
export function takeOldest(inbox: Inbox): { chunk: Buffer; rest: Inbox } | null {
  const front = inbox.front ?? oldestFirst(inbox.back);
  if (front === null) return null;
  const back = inbox.front === null ? null : inbox.back;
  const rest = { front: front.before, back, bytes: inbox.bytes - front.item.length, chunks: inbox.chunks - 1, dropped: inbox.dropped };
  return { chunk: front.item, rest };
}

/** The inbox with its dropped bytes reported: the count starts again at zero. */
export function withoutDropped(inbox: Inbox): Inbox {
  return inbox.dropped === 0 ? inbox : { ...inbox, dropped: 0 };
}

function oldestFirst(newestFirst: Chain<Buffer>): Chain<Buffer> {
  let out: Chain<Buffer> = null;
  for (let node = newestFirst; node !== null; node = node.before) out = { item: node.item, before: out };
  return out;
}
