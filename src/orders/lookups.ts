// The LIMS lookups of one query message: each named accession once and the worklist at most once (answer.ts
// lookupPlan), at most `inFlight` of them at a time, and none begun once the analyzer's budget is spent. Started all at
// once, 30,000 named specimens were 30,000 requests, each with a listener on the one abort signal (Node's
// EventTarget looks for a duplicate at every add, so the cost grew with the square of the count).
import type { Lookup } from './answer.js';

/** Where the orders come from (the LIMS orders client). Never throws for I/O. */
export interface OrdersSource {
  specimen(accession: string, instrumentId: string, signal: AbortSignal): Promise<Lookup>;
  worklist(instrumentId: string, signal: AbortSignal): Promise<Lookup>;
}

/** What the LIMS said for each accession, and for the worklist when it was asked. */
export interface LookedUp {
  byAccession: Map<string, Lookup>;
  worklist: Lookup | null;
}

const notBegun: Lookup = { kind: 'failed', reason: 'lims-timeout', detail: "not asked: the analyzer's deadline came first" };
// A source that throws has a bug: the analyzer is still answered, "no information".
const thrown: Lookup = { kind: 'failed', reason: 'lims-error', detail: 'orders client error' };

/** Runs the plan's lookups, `inFlight` at a time; one not begun before `signal` aborts is a timeout. */
export async function lookUp(
  plan: { accessions: readonly string[]; worklist: boolean },
  source: OrdersSource,
  instrumentId: string,
  inFlight: number,
  signal: AbortSignal,
): Promise<LookedUp> {
  const calls: (() => Promise<Lookup>)[] = plan.accessions.map((a) => () => source.specimen(a, instrumentId, signal));
  // The worklist first: one lookup answers every range and ALL of the message.
  if (plan.worklist) calls.unshift(() => source.worklist(instrumentId, signal));
  const results = new Array<Lookup>(calls.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < calls.length; i = next++) {
      try {
        results[i] = signal.aborted ? notBegun : await calls[i]!();
      } catch {
        results[i] = thrown;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, calls.length) }, worker));
  const worklist = plan.worklist ? results.shift()! : null;
  return { byAccession: new Map(plan.accessions.map((a, i) => [a, results[i]!])), worklist };
}
