// Claims that start after the sink's last claimed row (store/claim-cursor.ts), on real SQLite: the plans, every way a
// row comes back behind the cursor, and a long random run in which every claim is compared with the claim from the
// first due row that the gateway made before cursors (CLAIM_SQL with every in-flight id passed).
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Outcome, OutboxRow } from '../../src/delivery/contract.js';
import { outboxRangeOf, resultIdOf } from '../../src/store/layout.js';
import { CLAIM_LATER_SQL, CLAIM_SAME_AT_SQL, CLAIM_SQL, PASSED_SQL } from '../../src/store/outbox.js';
import { enqueue, sampleResult, testStore, type TestStore } from './fixture.js';

let s: TestStore;
beforeEach(() => {
  s = testStore();
});
afterEach(() => s.close());

let next = 0;
const fresh = (n: number) => Array.from({ length: n }, () => sampleResult(next++));
const ids = (rows: readonly OutboxRow[]) => rows.map((r) => r.id);
const plan = (sql: string, ...params: unknown[]) =>
  (s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((p) => p.detail).join('\n');
const delivered = (rows: readonly OutboxRow[]): Outcome[] => rows.map(() => ({ kind: 'delivered' }));

describe('claims after the cursor', () => {
  it('read the due index from the cursor on, and a group let in after its fsync is checked by rowid', () => {
    const same = plan(CLAIM_SAME_AT_SQL, 'postgres', 0, 0, 100, 200, 10);
    expect(same).toMatch(/SEARCH outbox USING INDEX outbox_due \(sink=\? AND next_attempt_at=\? AND id>\?\)/);
    const later = plan(CLAIM_LATER_SQL, 'postgres', 0, 0, 100, 200, 10);
    expect(later).toMatch(/SEARCH outbox USING INDEX outbox_due \(sink=\? AND next_attempt_at>\? AND next_attempt_at<\?\)/);
    for (const p of [same, later]) expect(p).not.toMatch(/TEMP B-TREE|SCAN outbox|json_each/);
    const passed = plan(PASSED_SQL, 1, 100, 'postgres', 0, 0, 0);
    expect(passed).toMatch(/SEARCH outbox USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
  });

  it('take up where the last claim stopped, and a released batch first again', () => {
    enqueue(s.db, 'postgres', fresh(10), s.clock.now - 10);
    const all = s.db.prepare(`SELECT id FROM outbox ORDER BY id`).pluck().all() as number[];
    const first = s.outbox.claimDue('postgres', 4);
    expect(ids(s.outbox.claimDue('postgres', 4))).toEqual(all.slice(4, 8));
    s.outbox.release('postgres', first);
    expect(ids(s.outbox.claimDue('postgres', 10))).toEqual([...all.slice(0, 4), ...all.slice(8)]);
    expect(s.outbox.claimDue('postgres', 10)).toEqual([]);
  });

  it('claim again a row whose retry keeps its due time, and one retried later when it is due', () => {
    enqueue(s.db, 'lims', fresh(4), s.clock.now - 10);
    const rows = s.outbox.claimDue('lims', 2);
    s.outbox.recordOutcomes(
      'lims',
      rows,
      [
        { kind: 'retry', reason: 'paused', scope: 'sink' },
        { kind: 'retry', reason: '503' },
      ],
      [null, s.clock.now + 5_000],
    );
    expect(ids(s.outbox.claimDue('lims', 10))).toEqual([rows[0]!.id, ...ids(s.db.prepare('SELECT id FROM outbox ORDER BY id').all() as OutboxRow[]).slice(2)]);
    s.clock.now += 5_000;
    expect(ids(s.outbox.claimDue('lims', 10))).toEqual([rows[1]!.id]);
  });

  it('claim a group held until its fsync before later rows, even when the cursor passed it meanwhile', () => {
    const t0 = s.clock.now;
    enqueue(s.db, 'postgres', fresh(3), t0 - 60_000);
    const old = s.outbox.claimDue('postgres', 1);
    // Retried to a due time after the group below was committed: the cursor goes past the group's rows.
    s.outbox.recordOutcomes('postgres', old, [{ kind: 'retry', reason: '503' }], [t0 + 1_000]);
    enqueue(s.db, 'postgres', fresh(2), t0 + 2_000);
    const last = resultIdOf(s.db.prepare('SELECT max(id) FROM outbox').pluck().get() as number);
    const group = enqueue(s.db, 'postgres', fresh(2), t0);
    s.outbox.holdUnsynced([outboxRangeOf(last + 1)[0], Number.MAX_SAFE_INTEGER]);
    s.clock.now = t0 + 1_000;
    expect(s.outbox.claimDue('postgres', 10)).toHaveLength(3); // the two older rows and the retried one: not the group
    s.outbox.holdUnsynced(null);
    s.clock.now = t0 + 2_000;
    expect(s.outbox.claimDue('postgres', 2).map((r) => r.dedupKey)).toEqual(group);
  });

  it('find a row another process put back behind the cursor once nothing follows it', () => {
    enqueue(s.db, 'postgres', fresh(3), s.clock.now - 10);
    const rows = s.outbox.claimDue('postgres', 3);
    s.outbox.recordOutcomes('postgres', rows, delivered(rows), [null, null, null]);
    const other = new Database(s.db.name);
    other.prepare(`UPDATE outbox SET state = 'pending' WHERE id = ?`).run(rows[0]!.id);
    other.close();
    expect(ids(s.outbox.claimDue('postgres', 10))).toEqual([rows[0]!.id]);
  });

  it('never claim twice a row in flight whose due time moved past the cursor', () => {
    enqueue(s.db, 'postgres', fresh(4), s.clock.now - 10);
    const [a, ...rest] = s.outbox.claimDue('postgres', 4);
    s.outbox.release('postgres', rest);
    s.db.prepare('UPDATE outbox SET next_attempt_at = ? WHERE id = ?').run(s.clock.now, a!.id); // as a person's forward does
    s.outbox.forgetCursors();
    expect(ids(s.outbox.claimDue('postgres', 2))).toEqual(ids(rest).slice(0, 2));
    expect(ids(s.outbox.claimDue('postgres', 10))).toEqual([rest[2]!.id]);
  });

  it('return what a claim from the first due row would, through a long random run of every way rows move', () => {
    const reference = s.db.prepare(CLAIM_SQL).raw();
    let seed = 20261204;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const flying = new Map<string, Map<number, OutboxRow>>([
      ['postgres', new Map()],
      ['lims', new Map()],
    ]);
    let held: [number, number] = [0, -1];
    let claims = 0;
    for (let step = 0; step < 3_000; step++) {
      const sink = rand(2) === 0 ? 'postgres' : 'lims';
      const out = flying.get(sink)!;
      const op = rand(10);
      if (op === 0) {
        const last = resultIdOf(s.db.prepare('SELECT coalesce(max(id), 0) FROM outbox').pluck().get() as number);
        enqueue(s.db, sink, fresh(1 + rand(5)), s.clock.now + rand(3) * 500 - 500);
        if (held[0] > held[1] && rand(2) === 0) held = [outboxRangeOf(last + 1)[0], Number.MAX_SAFE_INTEGER];
        s.outbox.holdUnsynced(held[0] > held[1] ? null : held);
      } else if (op === 1 && held[0] <= held[1]) {
        held = [0, -1];
        s.outbox.holdUnsynced(null);
      } else if (op === 2) {
        s.clock.now += rand(1_500);
      } else if (op <= 5) {
        const limit = 1 + rand(6);
        const expected = (reference.all(sink, s.clock.now, JSON.stringify([...out.keys()]), ...held, limit) as [number][]).map((r) => r[0]);
        const got = s.outbox.claimDue(sink, limit);
        expect(ids(got)).toEqual(expected);
        for (const row of got) out.set(row.id, row);
        claims++;
      } else if (out.size > 0) {
        const rows = [...out.values()].filter(() => rand(2) === 0);
        for (const row of rows) out.delete(row.id);
        if (op === 6) {
          s.outbox.release(sink, rows);
          continue;
        }
        const outcomes = rows.map(
          (): Outcome => [{ kind: 'delivered' }, { kind: 'retry', reason: 'x' }, { kind: 'retry', reason: 'pause', scope: 'sink' }][rand(3)] as Outcome,
        );
        const retryAt = outcomes.map((o) => (o.kind === 'retry' && o.scope === undefined ? s.clock.now + rand(2_000) - 200 : null));
        s.outbox.recordOutcomes(sink, rows, outcomes, retryAt);
      }
    }
    expect(claims).toBeGreaterThan(500);
  });
});
