// The FHIR sink's classification table, row by row: what is wrong with one Observation is a dead letter; what
// concerns every Observation alike is evidence that the sink is unwell, never a dead letter.
import { describe, expect, it } from 'vitest';
import { classifyFhir, outcomeIssues, type FhirAnswer } from '../../src/sinks/fhir-classify.js';
import { decideCreateMode } from '../../src/sinks/fhir-capability.js';

const answer = (status: number, ...issues: string[]): FhirAnswer => ({ kind: 'answer', status, issues });

describe('FHIR classification', () => {
  it.each([
    [answer(400, 'invalid'), { action: 'dead' }],
    [answer(422, 'processing'), { action: 'dead' }],
    [answer(422, 'business-rule'), { action: 'dead' }],
    [answer(400), { action: 'dead' }],
    [answer(400, 'not-supported'), { action: 'retry', scope: 'sink' }],
    [answer(400, 'security'), { action: 'retry', scope: 'sink' }],
    [answer(409, 'lock-error'), { action: 'retry', scope: 'record' }],
    [answer(401, 'login'), { action: 'retry', scope: 'sink' }],
    [answer(403, 'forbidden'), { action: 'retry', scope: 'sink' }],
    [answer(404), { action: 'retry', scope: 'sink' }],
    [answer(405), { action: 'retry', scope: 'sink' }],
    [answer(429, 'throttled'), { action: 'retry', scope: 'record', retryAfter: true }],
    [answer(500, 'exception'), { action: 'retry', scope: 'sink' }],
    [answer(503), { action: 'retry', scope: 'sink', retryAfter: true }],
    [answer(302), { action: 'retry', scope: 'sink' }],
    [
      { kind: 'failure', failure: 'connect' },
      { action: 'retry', scope: 'unreachable' },
    ],
    [
      { kind: 'failure', failure: 'timeout' },
      { action: 'retry', scope: 'sink' },
    ],
    [
      { kind: 'failure', failure: 'lost' },
      { action: 'retry', scope: 'sink' },
    ],
    [
      { kind: 'failure', failure: 'aborted' },
      { action: 'retry', scope: 'record' },
    ],
  ] as [FhirAnswer, object][])('%o → %o', (input, verdict) => {
    expect(classifyFhir(input)).toMatchObject(verdict);
  });

  it('reads the codes and a short diagnostic of an OperationOutcome, nothing of anything else', () => {
    const oo = {
      resourceType: 'OperationOutcome',
      issue: [
        { severity: 'error', code: 'invalid', diagnostics: 'bad value', expression: ['Observation.valueQuantity'] },
        { code: 'value', details: { text: 'x' } },
      ],
    };
    expect(outcomeIssues(oo)).toEqual({ codes: ['invalid', 'value'], text: 'invalid: bad value (Observation.valueQuantity); value: x' });
    expect(outcomeIssues({ issue: [{ code: 'invalid' }] })).toEqual({ codes: [], text: '' });
    expect(outcomeIssues('<html>')).toEqual({ codes: [], text: '' });
  });

  it('chooses how to create from the CapabilityStatement', () => {
    const statement = (observation: object) => ({
      resourceType: 'CapabilityStatement',
      rest: [{ mode: 'server', resource: [{ type: 'Patient' }, { type: 'Observation', ...observation }] }],
    });
    expect(decideCreateMode(statement({ conditionalCreate: true, updateCreate: true }))).toEqual({ ok: true, mode: 'conditional-create' });
    expect(decideCreateMode(statement({ updateCreate: true }))).toEqual({ ok: true, mode: 'update-as-create' });
    expect(decideCreateMode(statement({}))).toMatchObject({ ok: false, reason: expect.stringMatching(/neither/) });
    expect(decideCreateMode({ resourceType: 'CapabilityStatement', rest: [{ mode: 'server', resource: [] }] })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/no Observation/),
    });
    expect(decideCreateMode({ resourceType: 'Bundle' })).toMatchObject({ ok: false });
  });
});
