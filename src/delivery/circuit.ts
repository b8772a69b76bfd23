// The circuit breaker of one sink, as a pure state machine. It opens on evidence that the sink is down, not on one
// failed request: `failureThreshold` sink-scoped failures in a row with no answer between them (the rule of Envoy's
// outlier detection, consecutive_5xx, and of resilience4j's count-based window), or one connection that cannot be
// made. An isolated failure among answers only costs its record a retry. An open breaker is probed with one batch of
// one row, at the sink's Retry-After when it gave one, so a long outage never burns the attempts of every result.
import type { Outcome } from './contract.js';

/** closed: deliver (counting failures in a row); open: wait until probeAt; half-open: one probe is in flight. */
export type CircuitState =
  | { kind: 'closed'; failures: number }
  | { kind: 'open'; probeAt: number; since: number; reason: string }
  | { kind: 'half-open'; since: number; reason: string };

/** What happened, as input to the breaker. */
export type CircuitInput =
  | { kind: 'probe-sent' }
  /** The sink answered (delivered, conflict, dead letter): it is up. */
  | { kind: 'answered' }
  /** One sink-scoped failure; `notBefore` is the sink's Retry-After. */
  | { kind: 'failed'; now: number; reason: string; notBefore?: number }
  /** Certainly down (no connection, the store refused to record): open now. */
  | { kind: 'down'; now: number; reason: string; notBefore?: number };

/** What the drain may do now. */
export type Admission = { kind: 'batch' } | { kind: 'probe' } | { kind: 'wait'; until: number | null };

/** The breaker's settings. */
export interface CircuitPolicy {
  /** When to probe a paused sink that gave no Retry-After. */
  probeIntervalMs: number;
  /** Sink-scoped failures in a row, with no answer between, that pause the sink. */
  failureThreshold: number;
}

/** A closed breaker with no failure counted. */
export const closedCircuit: CircuitState = { kind: 'closed', failures: 0 };

// A Retry-After of 0 or in the past must not turn probing into a busy loop.
const MIN_RETRY_AFTER_PROBE_MS = 1_000;

/** The next breaker state. */
export function stepCircuit(state: CircuitState, input: CircuitInput, policy: CircuitPolicy): CircuitState {
  switch (input.kind) {
    case 'probe-sent':
      return state.kind === 'open' ? { kind: 'half-open', since: state.since, reason: state.reason } : state;
    case 'answered':
      return state.kind === 'closed' && state.failures === 0 ? state : closedCircuit;
    case 'failed':
      if (state.kind === 'closed' && state.failures + 1 < policy.failureThreshold) return { kind: 'closed', failures: state.failures + 1 };
      return opened(state, input, policy);
    case 'down':
      return opened(state, input, policy);
  }
}

function opened(state: CircuitState, input: Extract<CircuitInput, { now: number }>, policy: CircuitPolicy): CircuitState {
  const probeAt = input.notBefore !== undefined ? Math.max(input.notBefore, input.now + MIN_RETRY_AFTER_PROBE_MS) : input.now + policy.probeIntervalMs;
  const since = state.kind === 'closed' ? input.now : state.since;
  return { kind: 'open', probeAt, since, reason: input.reason };
}

/** Whether a batch, a probe, or nothing may be sent at `now`. */
export function admit(state: CircuitState, now: number): Admission {
  if (state.kind === 'closed') return { kind: 'batch' };
  if (state.kind === 'half-open') return { kind: 'wait', until: null };
  return now >= state.probeAt ? { kind: 'probe' } : { kind: 'wait', until: state.probeAt };
}

/** What one row's outcome says about the sink, or null when it says nothing (a record-scoped retry). */
export function evidenceOf(outcome: Outcome, now: number): CircuitInput | null {
  if (outcome.kind !== 'retry') return { kind: 'answered' };
  if (outcome.scope === undefined || outcome.scope === 'record') return null;
  const notBefore = outcome.notBefore !== undefined ? { notBefore: outcome.notBefore } : {};
  return { kind: outcome.scope === 'unreachable' ? 'down' : 'failed', now, reason: outcome.reason, ...notBefore };
}

/**
 * Steps the breaker through a batch's outcomes in row order. The rows of a batch run concurrently, so row order
 * stands in for the order the answers came in; for independent failures both orders make runs equally likely.
 * A probe that came back with no word on the sink (its row must wait, e.g. 429) was taken by the sink: it closes.
 */
export function judgeBatch(state: CircuitState, outcomes: readonly Outcome[], now: number, policy: CircuitPolicy, probe = false): CircuitState {
  let next = state;
  for (const outcome of outcomes) {
    const input = evidenceOf(outcome, now);
    if (input !== null) next = stepCircuit(next, input, policy);
  }
  return probe && next.kind === 'half-open' ? stepCircuit(next, { kind: 'answered' }, policy) : next;
}
