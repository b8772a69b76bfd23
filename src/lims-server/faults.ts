// What the LIMS test server can be told to do wrong, and the seeded dice that decide each request's fate.
// Every random choice goes through one injected `random()`, so a seed reproduces a misbehaving run exactly.
import type { OrderFault } from './orders.js';

/** Misbehavior, settable at start and at run time. Rates are shares of PUT requests in [0, 1]. */
export interface LimsFaults {
  /** Added to every request before it is handled. */
  latencyMs: number;
  /** Uniform extra latency in [0, jitterMs). */
  jitterMs: number;
  rate500: number;
  rate503: number;
  rate429: number;
  /** Retry-After sent with 429 and 503: seconds, or an HTTP date when `retryAfterAsDate`. */
  retryAfterSeconds: number;
  retryAfterAsDate: boolean;
  /** Apply the write, then destroy the socket without answering. */
  rateLost: number;
  /** Accept the request (its idempotency key is then "in processing") and never answer. */
  rateHang: number;
  /** Destroy every connection, existing and new. */
  outage: boolean;
  /** Server-side token lifetime; what the token endpoint advertises is `advertisedExpiresIn`. */
  tokenTtlSeconds: number;
  /** `expires_in` in token answers; defaults to tokenTtlSeconds. Larger values make tokens die "early". */
  advertisedExpiresIn: number | null;
  /** Status for a stale If-Match: 412 (RFC 9110) or 409, as some LIMSs do. */
  staleStatus: 409 | 412;
  /** Record ids answered with 422 (a payload the LIMS refuses). */
  reject422: string[];
  /** Record id → status to answer instead of handling (to exercise 400/403/404/...). */
  forcedStatus: Record<string, number>;
  /** Keep stored idempotent answers; off makes the LIMS forget keys (as after its key TTL passed). */
  replayIdempotent: boolean;
  /** Record id → the fates of its next PUTs, one taken per PUT (an isolated failure among successes). */
  scripted: Record<string, ScriptedFate[]>;
  /** How long a `slow` PUT (or orders lookup) waits before it is handled (longer than the client's timeout: it times out). */
  slowMs: number;
  /** Accession → what every lookup of its orders does instead of answering at once (`slow`: after slowMs). */
  orderFaults: Record<string, OrderFault>;
}

/** A well-behaved LIMS. */
export const noFaults: LimsFaults = {
  latencyMs: 0,
  jitterMs: 0,
  rate500: 0,
  rate503: 0,
  rate429: 0,
  retryAfterSeconds: 1,
  retryAfterAsDate: false,
  rateLost: 0,
  rateHang: 0,
  outage: false,
  tokenTtlSeconds: 3600,
  advertisedExpiresIn: null,
  staleStatus: 412,
  reject422: [],
  forcedStatus: {},
  replayIdempotent: true,
  scripted: {},
  slowMs: 3_000,
  orderFaults: {},
};

/** What happens to one PUT before the contract is applied. */
export type Fate = 'serve' | '500' | '503' | '429' | 'hang';

/** A fate a test scripts for one PUT: also `lost` (applied, then the socket is destroyed) and `slow` (see slowMs). */
export type ScriptedFate = Fate | 'lost' | 'slow';

/** Rolls the fate of one PUT: one die, the shares laid end to end. */
export function rollFate(f: Pick<LimsFaults, 'rate500' | 'rate503' | 'rate429' | 'rateHang'>, random: () => number): Fate {
  const x = random();
  const bands: [Fate, number][] = [
    ['500', f.rate500],
    ['503', f.rate503],
    ['429', f.rate429],
    ['hang', f.rateHang],
  ];
  let edge = 0;
  for (const [fate, share] of bands) {
    edge += share;
    if (x < edge) return fate;
  }
  return 'serve';
}

/** Latency for one request. */
export function latencyOf(f: Pick<LimsFaults, 'latencyMs' | 'jitterMs'>, random: () => number): number {
  return f.latencyMs + (f.jitterMs > 0 ? random() * f.jitterMs : 0);
}

/** mulberry32: a small, fast, seeded PRNG in [0, 1) — reproducible misbehavior, not cryptography. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
