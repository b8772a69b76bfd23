// Telling the LIMS an order reached the analyzer: `PUT {ordersPath}/{orderId}/dispatch/{instrumentId}` with
// `{"dispatchedAt": ...}`, idempotent by its URL. The rows come from the store's dispatches (drained by the same Drain
// as results, so an outage delays and never discards); the answer is read by the results sink's table
// (lims-classify.ts): a refusal of the record is a dead letter, anything that says the LIMS is unwell a retry.
import { classify, problemOf, retryAfterAt } from './lims-classify.js';
import { authedExchange } from './authed-exchange.js';
import type { OrdersEndpoint } from './lims-orders.js';
import type { OutboxRow, Outcome, Sink } from '../delivery/contract.js';
import { DISPATCH_SINK, type DispatchPayload } from '../delivery/dispatch-contract.js';

/** The dispatch sink over an orders endpoint. */
export function createDispatchSink(endpoint: OrdersEndpoint, now: () => number): Sink {
  return {
    name: DISPATCH_SINK,
    deliver: async (batch, signal) => {
      const outcomes: Outcome[] = [];
      // A handful of rows at a time at most, one after another: dispatches are few and never urgent.
      for (const row of batch) outcomes.push(await dispatch(endpoint, row, signal, now));
      return outcomes;
    },
    close: () => endpoint.close(),
  };
}

async function dispatch(endpoint: OrdersEndpoint, row: OutboxRow, signal: AbortSignal, now: () => number): Promise<Outcome> {
  if (signal.aborted) return { kind: 'retry', reason: 'delivery aborted', scope: 'record' };
  let p: Partial<DispatchPayload>;
  try {
    p = JSON.parse(row.payload) as Partial<DispatchPayload>;
  } catch {
    p = {};
  }
  if (typeof p.orderId !== 'string' || typeof p.instrumentId !== 'string' || typeof p.dispatchedAt !== 'string') {
    return { kind: 'dead', reason: 'payload is not a dispatch' };
  }
  const path = `${endpoint.base}/${encodeURIComponent(p.orderId)}/dispatch/${encodeURIComponent(p.instrumentId)}`;
  const body = JSON.stringify({ dispatchedAt: p.dispatchedAt });
  const res = await authedExchange(endpoint, signal, { method: 'PUT', path, headers: { 'content-type': 'application/json' }, body });
  if (res.kind === 'no-token') return { kind: 'retry', reason: res.reason, scope: res.unreachable ? 'unreachable' : 'sink' };
  if (res.kind === 'token-refused') return { kind: 'retry', reason: 'LIMS refused a freshly issued token', scope: 'sink' };
  const verdict = classify(res.kind === 'answer' ? { kind: 'answer', status: res.status, problem: problemOf(res.body) } : res);
  const status = res.kind === 'answer' ? `${res.status}` : res.failure;
  switch (verdict.action) {
    case 'delivered':
      return { kind: 'delivered' };
    case 'dead':
      return { kind: 'dead', reason: `${verdict.why}: ${status}` };
    case 'retry': {
      const notBefore = verdict.delay === 'retry-after' && res.kind === 'answer' ? retryAfterAt(res.headers['retry-after'], now()) : undefined;
      return { kind: 'retry', reason: `${verdict.why}: ${status}`, scope: verdict.scope, ...(notBefore !== undefined ? { notBefore } : {}) };
    }
    default:
      // A dispatch is unconditional: a precondition answer is the LIMS's own trouble; try again later.
      return { kind: 'retry', reason: `unexpected answer to a dispatch: ${status}`, scope: 'record' };
  }
}
