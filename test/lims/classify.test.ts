import { describe, expect, it } from 'vitest';
import { classify, problemOf, retryAfterAt, type Exchange, type Verdict } from '../../src/sinks/lims-classify.js';

const answer = (status: number, problem: string | null = null): Exchange => ({ kind: 'answer', status, problem });
const fail = (failure: 'connect' | 'timeout' | 'lost' | 'aborted'): Exchange => ({ kind: 'failure', failure });

// One row per line of the contract in issue 6.
const rows: [string, Exchange, Partial<Verdict> & { action: Verdict['action'] }][] = [
  ['200', answer(200), { action: 'delivered' }],
  ['201', answer(201), { action: 'delivered' }],
  ['204', answer(204), { action: 'delivered' }],
  ['412 precondition', answer(412), { action: 'check-record' }],
  ['409 stale etag', answer(409, 'precondition-failed'), { action: 'check-record' }],
  ['409 key in processing', answer(409, 'idempotency-key-in-processing'), { action: 'retry', scope: 'record', delay: 'processing' }],
  ['401', answer(401), { action: 'refresh-token' }],
  ['429', answer(429), { action: 'retry', scope: 'record', delay: 'retry-after' }],
  ['503', answer(503), { action: 'retry', scope: 'sink', delay: 'retry-after' }],
  ['500', answer(500), { action: 'retry', scope: 'sink', delay: 'none' }],
  ['502', answer(502), { action: 'retry', scope: 'sink', delay: 'none' }],
  ['504', answer(504), { action: 'retry', scope: 'sink', delay: 'none' }],
  ['400', answer(400), { action: 'dead' }],
  ['403', answer(403), { action: 'dead' }],
  ['404', answer(404), { action: 'dead' }],
  ['410', answer(410), { action: 'dead' }],
  ['422', answer(422), { action: 'dead' }],
  ['302', answer(302), { action: 'retry', scope: 'sink' }],
  ['timeout', fail('timeout'), { action: 'retry', scope: 'sink' }],
  ['connection refused', fail('connect'), { action: 'retry', scope: 'unreachable' }],
  ['lost response', fail('lost'), { action: 'retry', scope: 'sink' }],
  ['aborted', fail('aborted'), { action: 'retry', scope: 'record' }],
];

describe('LIMS classification table', () => {
  it.each(rows)('%s', (_name, exchange, expected) => {
    expect(classify(exchange)).toMatchObject(expected);
  });

  it('reads Retry-After as seconds or an HTTP date, never in the past', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(retryAfterAt('7', now)).toBe(now + 7000);
    expect(retryAfterAt('Thu, 01 Jan 2026 12:00:30 GMT', now)).toBe(now + 30_000);
    expect(retryAfterAt('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(now);
    expect(retryAfterAt('soon', now)).toBeUndefined();
    expect(retryAfterAt(undefined, now)).toBeUndefined();
  });

  it('reads the problem type of an RFC 9457 body', () => {
    expect(problemOf('{"type":"https://x/problems/idempotency-key-in-processing"}')).toBe('idempotency-key-in-processing');
    expect(problemOf('{"code":"busy"}')).toBe('busy');
    expect(problemOf('<html>')).toBeNull();
  });
});
