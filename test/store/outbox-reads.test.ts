// What the status page and `labgate status` read about delivery: per-sink counts without scanning the outbox,
// each result's state per sink, and the sample a dead letter belongs to.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations.js';
import { COUNT_SQL } from '../../src/store/outbox-operator.js';
import { DELIVERY_SQL } from '../../src/store/reads.js';
import type { Store } from '../../src/store/store.js';
import { message, result, scratchPerTest } from './store-fixtures.js';

const fresh = scratchPerTest();

// What counts() must equal, by the obvious full scan.
function scanned(store: Store): unknown[] {
  const rows = store.db.prepare(`SELECT sink, state, COUNT(*) AS n FROM outbox GROUP BY sink, state`).all() as { sink: string; state: string; n: number }[];
  const bySink = new Map<string, Record<string, unknown>>();
  for (const r of rows) {
    const c = bySink.get(r.sink) ?? { sink: r.sink, pending: 0, sent: 0, dead: 0, conflict: 0 };
    c[r.state] = r.n;
    bySink.set(r.sink, c);
  }
  return [...bySink.values()].sort((a, b) => String(a.sink).localeCompare(String(b.sink)));
}
const counted = (store: Store): unknown[] =>
  store.outbox
    .counts()
    .map(({ oldestPendingAt: _, ...c }) => c)
    .filter((c) => c.pending + c.sent + c.dead + c.conflict > 0);

describe('outbox.counts', () => {
  it('counts every state per sink exactly, through outcomes, operators and deletions', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([1, 2, 3, 4, 5].map((n) => result(n))));
    s.clock.advance(1_000);
    store.ingest(message([6, 7].map((n) => result(n))));
    const pg = store.outbox.claimDue('postgres', 4);
    store.outbox.recordOutcomes(
      'postgres',
      pg,
      [{ kind: 'delivered' }, { kind: 'delivered', etag: '"e"' }, { kind: 'dead', reason: '422' }, { kind: 'conflict', reason: 'differs' }],
      pg.map(() => null),
    );
    const lims = store.outbox.claimDue('lims', 3);
    store.outbox.recordOutcomes(
      'lims',
      lims,
      lims.map(() => ({ kind: 'delivered' })),
      lims.map(() => null),
    );
    expect(counted(store)).toEqual(scanned(store));
    expect(store.outbox.counts()).toEqual([
      { sink: 'lims', pending: 4, sent: 3, dead: 0, conflict: 0, oldestPendingAt: s.clock.now() - 1_000 },
      { sink: 'postgres', pending: 3, sent: 2, dead: 1, conflict: 1, oldestPendingAt: s.clock.now() - 1_000 },
    ]);

    store.outbox.retryDeadLetters({ all: true }, 'op');
    store.db.prepare(`DELETE FROM outbox WHERE sink = 'lims' AND state = 'sent' AND id = (SELECT MIN(id) FROM outbox WHERE sink = 'lims')`).run();
    store.db.prepare(`UPDATE outbox SET state = 'pending' WHERE sink = 'postgres' AND state = 'sent' AND etag IS NOT NULL`).run();
    expect(counted(store)).toEqual(scanned(store));
    expect(store.outbox.counts().find((c) => c.sink === 'postgres')).toMatchObject({ pending: 5, sent: 1, dead: 0, oldestPendingAt: s.clock.now() - 1_000 });
  });

  it('keeps the sent count exact when a minute older than a day folds into it, and after, through every path', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([1, 2, 3].map((n) => result(n))));
    const first = store.outbox.claimDue('lims', 2);
    store.outbox.recordOutcomes(
      'lims',
      first,
      first.map(() => ({ kind: 'delivered' })),
      first.map(() => null),
    );
    expect(store.db.prepare(`SELECT n FROM outbox_sent WHERE sink = 'lims'`).pluck().get()).toBe(0);
    s.clock.advance(26 * 3_600_000);
    const later = store.outbox.claimDue('lims', 1);
    store.outbox.recordOutcomes('lims', later, [{ kind: 'delivered' }], [null]);
    // The first minute was forgotten by the second batch: its two deliveries are in outbox_sent now.
    expect(store.db.prepare(`SELECT minute, n FROM outbox_sent_minutes WHERE sink = 'lims'`).all()).toEqual([
      { minute: Math.floor(s.clock.now() / 60_000), n: 1 },
    ]);
    expect(store.db.prepare(`SELECT n FROM outbox_sent WHERE sink = 'lims'`).pluck().get()).toBe(2);
    expect(counted(store)).toEqual(scanned(store));
    store.db.prepare(`UPDATE outbox SET state = 'pending' WHERE id = ?`).run(later[0]!.id);
    store.db.prepare(`DELETE FROM outbox WHERE id = ?`).run(first[0]!.id);
    expect(counted(store)).toEqual(scanned(store));
    expect(store.outbox.counts().find((c) => c.sink === 'lims')).toMatchObject({ sent: 1, pending: 1 });
  });

  it('takes the sent count of a database migrated from schema 10, whose minutes were also counted in outbox_sent', () => {
    const db = new Database(':memory:');
    migrate(db, migrations.slice(0, 10));
    db.exec(`INSERT INTO outbox_sent (sink, n) VALUES ('lims', 7), ('postgres', 3);
      INSERT INTO outbox_sent_minutes (sink, minute, n) VALUES ('lims', 100, 2), ('lims', 101, 3), ('postgres', 101, 3)`);
    migrate(db, migrations);
    expect(db.prepare(COUNT_SQL.sent).all()).toEqual([
      { sink: 'lims', n: 7 },
      { sink: 'postgres', n: 3 },
    ]);
    db.prepare('DELETE FROM outbox_sent_minutes WHERE minute < 101').run();
    expect(db.prepare('SELECT sink, n FROM outbox_sent ORDER BY sink').all()).toEqual([
      { sink: 'lims', n: 4 },
      { sink: 'postgres', n: 0 },
    ]);
    expect(db.prepare(COUNT_SQL.sent).all()).toEqual([
      { sink: 'lims', n: 7 },
      { sink: 'postgres', n: 3 },
    ]);
    db.close();
  });

  it('reads no count by a full scan of the outbox table', () => {
    const store = fresh().open();
    for (const sql of Object.values(COUNT_SQL)) {
      const params = sql.match(/\?/g)?.map(() => 1) ?? [];
      const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
      expect(plan.length, sql).toBeGreaterThan(0);
      for (const step of plan)
        expect(step, sql).toMatch(
          /^(SCAN|SEARCH) outbox(_sent|_sent_minutes)? USING (COVERING INDEX outbox_(due|dead|conflict|sent_at)\b|INTEGER PRIMARY KEY|PRIMARY KEY)|^SCAN outbox_sent$/,
        );
    }
  });

  it('takes the sent count of a database migrated from version 1', () => {
    const db = new Database(':memory:');
    migrate(db, migrations.slice(0, 1));
    const insert = db.prepare(`INSERT INTO outbox (sink, dedup_key, state, next_attempt_at, created_at, updated_at)
      VALUES (?, 'k', ?, 0, 0, 0)`);
    for (const [sink, state] of [
      ['lims', 'sent'],
      ['lims', 'sent'],
      ['lims', 'pending'],
      ['postgres', 'sent'],
    ])
      insert.run(sink, state);
    migrate(db, migrations);
    expect(db.prepare('SELECT sink, n FROM outbox_sent ORDER BY sink').all()).toEqual([
      { sink: 'lims', n: 2 },
      { sink: 'postgres', n: 1 },
    ]);
    db.close();
  });
});

describe('store.deliveryStates and store.resultOf', () => {
  it('gives each result its state per sink in one indexed query; QC and unknown results have none', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([result(1), result(2), result(3, { qc: true })]));
    const pg = store.outbox.claimDue('postgres', 1);
    store.outbox.recordOutcomes('postgres', pg, [{ kind: 'dead', reason: '422' }], [null]);
    const recent = store.recentResults(10);
    const states = store.deliveryStates([...recent, { dedupKey: 'f'.repeat(64), resultedAt: recent[0]!.resultedAt }]);
    const [first, second, qc] = [...recent].reverse();
    expect(states.get(first!.dedupKey)).toEqual([
      { sink: 'postgres', state: 'dead' },
      { sink: 'lims', state: 'pending' },
    ]);
    expect(states.get(second!.dedupKey)).toEqual([
      { sink: 'postgres', state: 'pending' },
      { sink: 'lims', state: 'pending' },
    ]);
    expect(states.has(qc!.dedupKey)).toBe(false);
    expect(states.size).toBe(2);
    const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${DELIVERY_SQL}`).all('[]') as { detail: string }[]).map((d) => d.detail);
    expect(plan.filter((d) => d.startsWith('SCAN'))).toEqual(['SCAN j VIRTUAL TABLE INDEX 1:']);
  });

  it('names a stored result by its resulted_at or by one of its outbox rows, and shows its analyzer code and range', () => {
    const store = fresh().open();
    store.ingest(message([result(1)]));
    const [r] = store.recentResults(1);
    expect(r).toMatchObject({ accession: 'A101', analyzerCode: 'K', referenceRange: '3.5-5.1' });
    expect(store.resultOf({ dedupKey: r!.dedupKey, resultedAt: r!.resultedAt })).toEqual({ accession: 'A101', analyteLoinc: '2823-3' });
    const [row] = store.outbox.claimDue('lims', 1);
    expect(store.resultOf({ dedupKey: r!.dedupKey, outboxId: row!.id })).toEqual({ accession: 'A101', analyteLoinc: '2823-3' });
    expect(store.resultOf({ dedupKey: 'f'.repeat(64), outboxId: row!.id })).toBeUndefined();
    expect(store.resultOf({ dedupKey: r!.dedupKey, resultedAt: '2026-07-01T14:30:01+00:00' })).toBeUndefined();
  });
});
