// The contract between the store's dispatch rows and the LIMS dispatch sink: the sink name the rows are drained
// under and the payload each row carries. Neutral ground, as contract.ts is for results: the store writes these rows
// and the sink sends them, and neither imports the other.

/** The sink name dispatch rows are drained under. */
export const DISPATCH_SINK = 'lims-dispatch';

/** One order an analyzer has, as the dispatch sink sends it (the row's payload). */
export interface DispatchPayload {
  orderId: string;
  instrumentId: string;
  /** RFC 3339: when the analyzer ACKed it. */
  dispatchedAt: string;
}
