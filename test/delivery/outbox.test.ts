// The outbox side of the store on real SQLite: indexed claims, in-flight exclusion, outcomes in one transaction,
// operator actions audited.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/payload.js';
import { CLAIM_SQL, Outbox } from '../../src/store/outbox.js';
import { enqueue, sampleResult, states, testStore, type TestStore } from './fixture.js';

let s: TestStore;
beforeEach(() => {
  s = testStore();
});
afterEach(() => s.close());

const results = (n: number, from = 0) => Array.from({ length: n }, (_, i) => sampleResult(from + i));

describe('outbox', () => {
  it('claims through the partial index outbox_due, never scanning the backlog', () => {
    const plan = s.db.prepare(`EXPLAIN QUERY PLAN ${CLAIM_SQL}`).all('postgres', 0, '[1,2]', 100, 200, 10) as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/SEARCH outbox USING INDEX outbox_due \(sink=\? AND next_attempt_at<\?\)/);
    expect(plan.map((p) => p.detail).join('\n')).not.toMatch(/TEMP B-TREE|SCAN outbox/);
  });

  it('claims due rows oldest first, only for the sink, and never a row already in flight', () => {
    enqueue(s.db, 'postgres', results(5), s.clock.now - 10);
    enqueue(s.db, 'lims', results(5), s.clock.now - 10);
    enqueue(s.db, 'postgres', results(2, 100), s.clock.now + 60_000);
    const first = s.outbox.claimDue('postgres', 3);
    const second = s.outbox.claimDue('postgres', 3);
    expect(first.map((r) => r.sink)).toEqual(['postgres', 'postgres', 'postgres']);
    expect(second).toHaveLength(2);
    expect(new Set([...first, ...second].map((r) => r.id)).size).toBe(5);
    expect(s.outbox.claimDue('postgres', 3)).toEqual([]);
    expect(s.outbox.nextDueAt('postgres')).toBe(s.clock.now + 60_000);
    expect(first[0]).toMatchObject({ attempts: 0, etag: null, recordId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it("hands every sink the result's one stored payload, so a payload corrupted at rest reaches them with the digest it was stored with", () => {
    enqueue(s.db, 'postgres', results(1), s.clock.now);
    enqueue(s.db, 'lims', results(1), s.clock.now);
    const [pg] = s.outbox.claimDue('postgres', 1);
    expect(sha256Hex(pg!.payload)).toBe(pg!.payloadSha256);
    s.outbox.release('postgres', [pg!]);
    s.db.prepare(`UPDATE results SET payload = replace(payload, 'mmol/L', 'mmol/l')`).run();
    for (const sink of ['postgres', 'lims']) {
      const [row] = s.outbox.claimDue(sink, 1);
      expect(row!.payloadSha256).toBe(pg!.payloadSha256);
      expect(sha256Hex(row!.payload)).not.toBe(row!.payloadSha256); // what the LIMS sink dead-letters (test/lims/sink-rows)
    }
  });

  it('forgets claims on restart: after a crash every unfinished row is due again', () => {
    enqueue(s.db, 'postgres', results(3), s.clock.now);
    expect(s.outbox.claimDue('postgres', 10)).toHaveLength(3);
    const restarted = new Outbox(s.db, () => s.clock.now);
    expect(restarted.claimDue('postgres', 10)).toHaveLength(3);
  });

  it('records every kind of outcome in one transaction', () => {
    enqueue(s.db, 'lims', results(5), s.clock.now);
    const rows = s.outbox.claimDue('lims', 10);
    s.outbox.recordOutcomes(
      'lims',
      rows,
      [
        { kind: 'delivered', etag: '"v1"' },
        { kind: 'retry', reason: '503', notBefore: 1 },
        { kind: 'retry', reason: 'refused', scope: 'sink' },
        { kind: 'dead', reason: '422 invalid' },
        { kind: 'conflict', reason: 'LIMS holds another value', theirs: '{"value":"5"}' },
      ],
      [null, s.clock.now + 5_000, null, null, null],
    );
    const byId = (id: number) => s.db.prepare('SELECT * FROM outbox WHERE id = ?').get(id) as Record<string, unknown>;
    expect(byId(rows[0]!.id)).toMatchObject({ state: 'sent', etag: '"v1"', sent_at: s.clock.now });
    expect(byId(rows[1]!.id)).toMatchObject({ state: 'pending', attempts: 1, next_attempt_at: s.clock.now + 5_000, last_error: '503' });
    expect(byId(rows[2]!.id)).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: s.clock.now, last_error: 'refused' });
    expect(byId(rows[3]!.id)).toMatchObject({ state: 'dead', last_error: '422 invalid' });
    expect(byId(rows[4]!.id)).toMatchObject({ state: 'conflict' });
    expect(s.db.prepare('SELECT origin, stored_payload, reason FROM conflicts').all()).toEqual([
      { origin: 'lims', stored_payload: '{"value":"5"}', reason: 'LIMS holds another value' },
    ]);
    expect(s.db.prepare('SELECT action, subject FROM audit ORDER BY id').all()).toEqual([
      { action: 'dead-letter', subject: rows[3]!.dedupKey },
      { action: 'sink-conflict', subject: rows[4]!.dedupKey },
    ]);
    expect(s.outbox.inFlightCount('lims')).toBe(0);
    expect(s.db.pragma('synchronous', { simple: true })).toBe(2); // FULL again for ingest
  });

  it('counts per sink, lists, retries and purges dead letters with an audit trail', () => {
    enqueue(s.db, 'postgres', results(4), s.clock.now - 5_000);
    const rows = s.outbox.claimDue('postgres', 4);
    const dead = { kind: 'dead', reason: '22008' } as const;
    s.outbox.recordOutcomes('postgres', rows, [{ kind: 'delivered' }, dead, dead, { kind: 'retry', reason: 'x', scope: 'sink' }], [null, null, null, null]);
    expect(s.outbox.counts()).toEqual([{ sink: 'postgres', pending: 1, sent: 1, dead: 2, conflict: 0, oldestPendingAt: s.clock.now - 5_000 }]);
    expect(s.outbox.sentSince('postgres', s.clock.now - 1)).toBe(1);
    expect(s.outbox.deadLetters({ sink: 'postgres' }).map((d) => d.dedupKey)).toEqual([rows[1]!.dedupKey, rows[2]!.dedupKey]);
    expect(s.outbox.retryDeadLetters({ key: rows[1]!.dedupKey }, 'alice')).toBe(1);
    expect(s.outbox.purgeDeadLetters({ all: true }, 'bob')).toBe(1);
    expect(() => s.outbox.purgeDeadLetters({}, 'bob')).toThrow(RangeError);
    expect(states(s.db, 'postgres')).toEqual({ pending: 2, sent: 1 });
    expect(s.db.prepare(`SELECT actor, action, subject FROM audit WHERE actor != 'gateway' ORDER BY id`).all()).toEqual([
      { actor: 'alice', action: 'dead-letter-retry', subject: rows[1]!.dedupKey },
      { actor: 'bob', action: 'dead-letter-purge', subject: rows[2]!.dedupKey },
    ]);
  });
});
