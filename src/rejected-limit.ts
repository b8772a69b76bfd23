// How much one instrument may journal while everything it sends is rejected. A message, however broken, is journaled
// (ARCHITECTURE.md invariant 2), but a broken analyzer or a sender of message-shaped garbage sends hundreds a second;
// journaled one by one they take the SD card's writes and the commits every other instrument waits for
// (invariant 11), and the card itself. So while an instrument sends only rejected messages, it may journal at most so
// many messages and so many bytes a minute; beyond that, its rejected messages are refused (NAK, AR: the analyzer
// keeps them) until the minute is over. One message accepted (a result stored) resets it: an analyzer that also sends
// good messages is never held back, whatever share of its messages is rejected. A message with neither a result nor a
// rejection (a query, an empty report) neither counts nor resets. Pure apart from its counters; time is passed in.

/** The limits, per instrument. */
export interface RejectedLimits {
  messagesPerMinute: number;
  bytesPerMinute: number;
}

/** What a message is, as far as the limit goes. */
export type Verdict = 'accepted' | 'rejected' | 'neither';

/** Journal the message, or refuse it; each says how many were refused in a minute that has just ended. */
export type LimitDecision = { kind: 'journal'; refusedBefore: number } | { kind: 'refuse'; first: boolean; journaled: number };

/** The window a limit counts in. */
export const LIMIT_WINDOW_MS = 60_000;

interface Window {
  startedAt: number;
  messages: number;
  bytes: number;
  refused: number;
}

/** A message's verdict from what its decoder made of it. */
export function verdictOf(decoded: { results: readonly unknown[]; rejections: readonly unknown[] }): Verdict {
  if (decoded.results.length > 0) return 'accepted';
  return decoded.rejections.length > 0 ? 'rejected' : 'neither';
}

/** One instrument's count of rejected messages journaled in the current minute. */
export class RejectedLimit {
  private window: Window | undefined;

  constructor(private readonly limits: RejectedLimits) {}

  /** Decides one message at monotonic time `now`: journal it (counted when rejected) or refuse it. */
  next(now: number, verdict: Verdict, bytes: number): LimitDecision {
    if (verdict === 'neither') return { kind: 'journal', refusedBefore: 0 };
    const ended = this.window !== undefined && (verdict === 'accepted' || now >= this.window.startedAt + LIMIT_WINDOW_MS);
    const refusedBefore = ended ? this.window!.refused : 0;
    if (ended || verdict === 'accepted') this.window = undefined;
    if (verdict === 'accepted') return { kind: 'journal', refusedBefore };
    const w = (this.window ??= { startedAt: now, messages: 0, bytes: 0, refused: 0 });
    // The first message of a minute is journaled whatever its size: a limit below one message must not refuse it for ever.
    const over = w.messages > 0 && (w.messages + 1 > this.limits.messagesPerMinute || w.bytes + bytes > this.limits.bytesPerMinute);
    if (over) {
      w.refused += 1;
      return { kind: 'refuse', first: w.refused === 1, journaled: w.messages };
    }
    w.messages += 1;
    w.bytes += bytes;
    return { kind: 'journal', refusedBefore };
  }
}
