// The circuit breaker of one sink, as a pure state machine. A sink that is down as a whole is paused and
// probed with one batch of one row, so a long outage never burns the attempts of every pending result.
import type { Outcome } from '../sinks/sink.js';

/** closed: deliver; open: wait until probeAt; half-open: one probe is in flight. */
export type CircuitState =
  | { kind: 'closed' }
  | { kind: 'open'; probeAt: number; since: number; reason: string }
  | { kind: 'half-open'; since: number; reason: string };

/** What happened, as input to the breaker. */
export type CircuitInput =
  | { kind: 'probe-sent' }
  | { kind: 'batch-ok' }
  | { kind: 'sink-down'; now: number; reason: string; notBefore?: number };

/** What the drain may do now. */
export type Admission = { kind: 'batch' } | { kind: 'probe' } | { kind: 'wait'; until: number | null };

/** The breaker's one setting. */
export interface CircuitPolicy {
  probeIntervalMs: number;
}

/** A closed breaker. */
export const closedCircuit: CircuitState = { kind: 'closed' };

/** The next breaker state. */
export function stepCircuit(state: CircuitState, input: CircuitInput, policy: CircuitPolicy): CircuitState {
  switch (input.kind) {
    case 'probe-sent':
      return state.kind === 'open' ? { kind: 'half-open', since: state.since, reason: state.reason } : state;
    case 'batch-ok':
      return closedCircuit;
    case 'sink-down': {
      const probeAt = Math.max(input.now + policy.probeIntervalMs, input.notBefore ?? 0);
      const since = state.kind === 'closed' ? input.now : state.since;
      return { kind: 'open', probeAt, since, reason: input.reason };
    }
  }
}

/** Whether a batch, a probe, or nothing may be sent at `now`. */
export function admit(state: CircuitState, now: number): Admission {
  if (state.kind === 'closed') return { kind: 'batch' };
  if (state.kind === 'half-open') return { kind: 'wait', until: null };
  return now >= state.probeAt ? { kind: 'probe' } : { kind: 'wait', until: state.probeAt };
}

/** Reads a batch's outcomes as breaker input: down when the sink says so, or when every row of a multi-row batch must be retried. */
export function judgeBatch(outcomes: readonly Outcome[], now: number): CircuitInput {
  const retries = outcomes.filter((o): o is Extract<Outcome, { kind: 'retry' }> => o.kind === 'retry');
  const sinkWide = retries.filter((o) => o.scope === 'sink');
  const allFailed = outcomes.length > 1 && retries.length === outcomes.length;
  if (sinkWide.length === 0 && !allFailed) return { kind: 'batch-ok' };
  const first = sinkWide[0] ?? retries[0]!;
  const notBefore = Math.max(0, ...retries.map((o) => o.notBefore ?? 0));
  return { kind: 'sink-down', now, reason: first.reason, ...(notBefore > 0 ? { notBefore } : {}) };
}
