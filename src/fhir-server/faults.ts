// What the FHIR test server can be told to do wrong: the LIMS test server's faults (latency, 5xx, 429, lost
// answers, hanging requests, outages, token expiry), rolled once per write request (a batch is one request), plus
// entries refused by identifier. The dice and the latency are the LIMS test server's (lims-server/faults.ts).
import type { LimsFaults } from '../lims-server/faults.js';

/** Misbehavior, settable at start and at run time. Rates are shares of write requests in [0, 1]. */
export interface FhirFaults extends Pick<
  LimsFaults,
  | 'latencyMs'
  | 'jitterMs'
  | 'rate500'
  | 'rate503'
  | 'rate429'
  | 'rateLost'
  | 'rateHang'
  | 'outage'
  | 'retryAfterSeconds'
  | 'tokenTtlSeconds'
  | 'advertisedExpiresIn'
> {
  /** Identifier values (labgate's dedup keys) whose entries are refused with 422 and an `invalid` OperationOutcome. */
  rejectIdentifiers: string[];
  /** Refuse a whole batch of more than one entry with 400 when it holds a refused identifier (servers that validate up front). */
  rejectWholeBatch: boolean;
}

/** A well-behaved server. */
export const noFhirFaults: FhirFaults = {
  latencyMs: 0,
  jitterMs: 0,
  rate500: 0,
  rate503: 0,
  rate429: 0,
  rateLost: 0,
  rateHang: 0,
  outage: false,
  retryAfterSeconds: 1,
  tokenTtlSeconds: 3600,
  advertisedExpiresIn: null,
  rejectIdentifiers: [],
  rejectWholeBatch: false,
};
