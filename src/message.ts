// The contract between drivers and the store: what one analyzer message becomes, and what committing it did.
// Neutral ground: protocol code and the store both import it, neither imports the other.
import type { OrderQuery } from './orders/order.js';
import type { KeyedResult } from './result.js';

/** The protocols labgate speaks; also the name of each driver folder. */
export type Protocol = 'astm' | 'hl7' | 'line';

/** The raw bytes of one message exactly as received (invariant 2: journaled before anything else is decided). */
export interface Capture {
  instrumentId: string;
  protocol: Protocol;
  /** Epoch milliseconds at which the message was complete. */
  receivedAt: number;
  /** Set when the wall clock was known not to be synchronised at receipt: receivedAt may be far off. */
  clock?: 'unsynchronised';
  raw: Buffer;
}

/** Why a result (or a whole message) could not be normalized. Never carries patient demographics. */
export interface Rejection {
  reason: string;
  /** The analyzer's test code, when the rejection is about one result. */
  analyzerCode?: string;
  accession?: string;
  /** What the analyzer sent beside the code, for the codes it has sent (never stored with the reasons). */
  observed?: { value: string; unit: string | null };
}

/** What a driver's pure decoder makes of one message. QC results travel with `qc: true` on the result. */
export interface DecodedMessage {
  results: KeyedResult[];
  rejections: Rejection[];
  /** Host queries the message asks (ASTM Q records): answered by a two-way instrument, journaled like any message. */
  queries?: OrderQuery[];
}

/** One message handed to `store.ingest`: the capture plus what was decoded from it. */
export interface InboundMessage extends DecodedMessage {
  capture: Capture;
}

/** What one ingest did. */
export interface IngestSummary {
  captureId: number;
  inserted: number;
  absorbed: number;
  conflicts: number;
  rejected: number;
}
