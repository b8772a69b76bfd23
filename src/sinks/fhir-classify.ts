// How the FHIR sink reads an answer it did not expect: a table of rules, first match wins, over the HTTP status and
// the codes of the OperationOutcome's issues (R4 IssueType). Pure. ARCHITECTURE.md invariant 6: only what is wrong
// with this one Observation is a dead letter (the invalid and processing families); whatever concerns every
// Observation alike (auth, scopes, an unsupported interaction, a server error) is evidence that the sink is unwell
// (scope 'sink'; 'unreachable' when no connection could be made), which the delivery engine's breaker weighs.
import type { RetryScope } from '../delivery/contract.js';
import type { ExchangeFailure } from './lims-http.js';

/** What came back for one entry or one whole request. */
export type FhirAnswer = { kind: 'answer'; status: number; issues: readonly string[] } | { kind: 'failure'; failure: ExchangeFailure };

/** What the sink does with it. */
export type FhirVerdict = { action: 'retry'; scope: RetryScope; why: string; retryAfter?: boolean } | { action: 'dead'; why: string };

// R4 IssueType codes grouped as the value set nests them.
const SECURITY = ['security', 'login', 'unknown', 'expired', 'forbidden', 'suppressed'];
const TRANSIENT = ['transient', 'lock-error', 'no-store', 'exception', 'timeout', 'incomplete', 'throttled'];
const UNSUPPORTED = ['not-supported', 'too-costly'];

interface Rule {
  readonly when: { status: readonly [number, number]; issues?: readonly string[] } | { failure: readonly string[] };
  readonly then: FhirVerdict;
}

/** The table, top to bottom: read it as the contract. */
export const fhirRules: readonly Rule[] = [
  // 429 throttles this client, not the record: the row waits for Retry-After without opening the breaker.
  { when: { status: [429, 429] }, then: { action: 'retry', scope: 'record', why: 'rate limited', retryAfter: true } },
  { when: { status: [401, 401] }, then: { action: 'retry', scope: 'sink', why: 'the FHIR server refused the token' } },
  // Missing scopes or a server policy: every Observation is refused alike, so nothing is dead-lettered for it.
  { when: { status: [403, 403] }, then: { action: 'retry', scope: 'sink', why: "forbidden (check the client's scopes, e.g. system/Observation.write)" } },
  { when: { status: [400, 499], issues: SECURITY }, then: { action: 'retry', scope: 'sink', why: 'refused for a security reason' } },
  {
    when: { status: [400, 499], issues: UNSUPPORTED },
    then: { action: 'retry', scope: 'sink', why: 'the FHIR server does not support this interaction (check sinks.fhir.createMode)' },
  },
  { when: { status: [400, 499], issues: TRANSIENT }, then: { action: 'retry', scope: 'record', why: 'transient refusal' } },
  // Not Found / Method Not Allowed for Observation: a wrong base URL or a server without the interaction.
  { when: { status: [404, 405] }, then: { action: 'retry', scope: 'sink', why: 'the FHIR server does not take Observations at this URL' } },
  { when: { status: [503, 503] }, then: { action: 'retry', scope: 'sink', why: 'FHIR server unavailable', retryAfter: true } },
  { when: { status: [500, 599] }, then: { action: 'retry', scope: 'sink', why: 'FHIR server error' } },
  // invalid (structure, required, value, invariant) and processing (code-invalid, business-rule, ...) issues, or a
  // 4xx with no OperationOutcome: this Observation is refused as it is.
  { when: { status: [400, 499] }, then: { action: 'dead', why: 'refused by the FHIR server' } },
  { when: { status: [100, 399] }, then: { action: 'retry', scope: 'sink', why: 'unexpected status' } },
  { when: { failure: ['aborted'] }, then: { action: 'retry', scope: 'record', why: 'delivery aborted' } },
  { when: { failure: ['timeout'] }, then: { action: 'retry', scope: 'sink', why: 'FHIR server timed out' } },
  { when: { failure: ['connect'] }, then: { action: 'retry', scope: 'unreachable', why: 'FHIR server unreachable' } },
  // The batch may have been applied: conditional creates and If-Match updates make the resend safe.
  { when: { failure: ['lost'] }, then: { action: 'retry', scope: 'sink', why: 'response lost' } },
  { when: { failure: ['too-large'] }, then: { action: 'retry', scope: 'sink', why: 'FHIR answer over the size cap (sinks.fhir.maxAnswerBytes)' } },
];

/** Classifies by the first matching rule. */
export function classifyFhir(answer: FhirAnswer): FhirVerdict {
  for (const { when, then } of fhirRules) {
    if ('failure' in when) {
      if (answer.kind === 'failure' && when.failure.includes(answer.failure)) return then;
      continue;
    }
    if (answer.kind !== 'answer') continue;
    const [lo, hi] = when.status;
    if (answer.status < lo || answer.status > hi) continue;
    if (when.issues !== undefined && !answer.issues.some((i) => when.issues!.includes(i))) continue;
    return then;
  }
  return { action: 'retry', scope: 'sink', why: 'unclassified answer' };
}

/** The issue codes and a short diagnostic text of an OperationOutcome (or of anything else: none). */
export function outcomeIssues(document: unknown): { codes: string[]; text: string } {
  const issues = (document as { resourceType?: unknown; issue?: unknown } | null)?.issue;
  if ((document as { resourceType?: unknown } | null)?.resourceType !== 'OperationOutcome' || !Array.isArray(issues)) return { codes: [], text: '' };
  const codes: string[] = [];
  const texts: string[] = [];
  for (const i of issues as { code?: unknown; diagnostics?: unknown; details?: { text?: unknown }; expression?: unknown }[]) {
    if (typeof i.code === 'string') codes.push(i.code);
    const text = typeof i.diagnostics === 'string' ? i.diagnostics : typeof i.details?.text === 'string' ? i.details.text : '';
    const where = Array.isArray(i.expression) && typeof i.expression[0] === 'string' ? ` (${i.expression[0]})` : '';
    if (text || where) texts.push(`${i.code ?? ''}: ${text}${where}`);
  }
  return { codes, text: texts.join('; ').slice(0, 400) };
}

/**
 * The outcomes of the rows that rode on one exchange, weighed as one piece of evidence (delivery/contract.ts): when every
 * row failed, the first sink-wide retry keeps its scope and the others are the record's own; when the server
 * answered any row, it is up, and a failed entry concerns that record alone.
 */
export function asOneExchange<T extends { kind: string }>(results: T[]): T[] {
  const wide = (r: T): boolean => r.kind === 'retry' && ((r as { scope?: RetryScope }).scope ?? 'record') !== 'record';
  const allFailed = results.every((r) => r.kind === 'retry');
  let kept = !allFailed;
  return results.map((r) => {
    if (!wide(r)) return r;
    if (!kept) {
      kept = true;
      return r;
    }
    return { ...r, scope: 'record' } as T;
  });
}
