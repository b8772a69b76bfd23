import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/payload.js';
import { dedupKey } from '../../src/result.js';
import { dumpTables, message, result, scratchPerTest } from './store-fixtures.js';
import { outboxIdOf, resultIdSql } from '../../src/store/layout.js';
import type { ResultPayload } from '../../src/payload.js';
import { rowToResult, type ResultRow } from '../../src/store/stored-result.js';

const fresh = scratchPerTest();

const volatile = { results: ['load_count', 'last_seen_at'] } as const;

describe('store.ingest', () => {
  it('stores a message once: results, one outbox row per sink, an audit entry per result', () => {
    const store = fresh().open();
    const summary = store.ingest(message([result(1), result(2)]));
    expect(summary).toEqual({ captureId: 1, inserted: 2, absorbed: 0, conflicts: 0, rejected: 0 });
    const outbox = store.db
      .prepare(
        `SELECT o.sink, o.dedup_key, o.state, r.payload, r.payload_sha256
      FROM outbox o JOIN results r ON r.id = ${resultIdSql('o.id')} ORDER BY o.id`,
      )
      .all() as {
      sink: string;
      dedup_key: string;
      state: string;
      payload: string;
      payload_sha256: string;
    }[];
    expect(outbox.map((r) => r.sink)).toEqual(['postgres', 'lims', 'postgres', 'lims']);
    for (const row of outbox) {
      expect(row.state).toBe('pending');
      expect(row.payload_sha256).toBe(sha256Hex(row.payload));
      const payload = JSON.parse(row.payload) as { dedupKey: string; result: { source: { captureId: number } } };
      expect(payload.dedupKey).toBe(row.dedup_key);
      expect(payload.result.source.captureId).toBe(1);
    }
    const audit = store.db.prepare('SELECT action, subject FROM audit ORDER BY id').all();
    expect(audit).toEqual([
      { action: 'inserted', subject: dedupKey(result(1)) },
      { action: 'inserted', subject: dedupKey(result(2)) },
    ]);
    const capture = store.db.prepare('SELECT status, reasons, raw, result_count FROM captures').get() as Record<string, unknown>;
    expect(capture).toEqual({ status: 'accepted', reasons: null, raw: message([]).capture.raw, result_count: 2 });
  });

  it("stores a result's provenance once, in its payload; a row stored before keeps it in its column", () => {
    const store = fresh().open();
    store.ingest(message([result(1)]));
    const row = store.db.prepare('SELECT * FROM results').get() as ResultRow;
    expect(row.source).toBe('');
    const stored = rowToResult(row);
    expect(stored.source).toEqual((JSON.parse(row.payload) as ResultPayload).result.source);
    expect(stored.source).toMatchObject({ analyzerCode: result(1).source.analyzerCode, captureId: 1 });
    expect(rowToResult({ ...row, source: JSON.stringify(stored.source) })).toEqual(stored);
  });

  it('writes every outbox row and audit entry of a message longer than one multi-row statement', () => {
    const store = fresh().open();
    // 70 results: statements of 32, 32 and 6 results; two of them replays inside the message.
    const results = Array.from({ length: 68 }, (_, i) => result(i + 1));
    const summary = store.ingest(message([...results, result(5), result(40)]));
    expect(summary).toMatchObject({ inserted: 68, absorbed: 2, conflicts: 0 });
    const rows = store.db
      .prepare(
        `SELECT o.id, o.sink, o.dedup_key AS key, r.id AS resultId, r.dedup_key AS resultKey
        FROM outbox o JOIN results r ON r.id = ${resultIdSql('o.id')} ORDER BY o.id`,
      )
      .all() as { id: number; sink: string; key: string; resultId: number; resultKey: string }[];
    expect(rows).toHaveLength(136);
    expect(rows.every((r) => r.key === r.resultKey && r.id === outboxIdOf(r.resultId, r.sink === 'postgres' ? 0 : 1))).toBe(true);
    expect(new Set(rows.map((r) => r.key))).toEqual(new Set(results.map((r) => dedupKey(r))));
    const audit = store.db.prepare('SELECT action, subject FROM audit ORDER BY id').all();
    expect(audit).toEqual([
      ...results.map((r) => ({ action: 'inserted', subject: dedupKey(r) })),
      { action: 'absorbed', subject: dedupKey(result(5)) },
      { action: 'absorbed', subject: dedupKey(result(40)) },
    ]);
  });

  it('leaves the store as one ingest would, except load_count, when a message arrives twice', () => {
    const once = fresh();
    const twice = fresh();
    const msg = message([result(1), result(2), result(3, { qc: true })]);
    once.open().ingest(msg);
    const store = twice.open();
    store.ingest(msg);
    twice.clock.advance(60_000);
    expect(store.ingest(msg)).toMatchObject({ inserted: 0, absorbed: 3, conflicts: 0, rejected: 0 });

    const a = dumpTables(once.open({ lock: false }), volatile);
    const b = dumpTables(store, volatile);
    for (const table of ['results', 'outbox', 'conflicts'] as const) expect(b[table]).toEqual(a[table]);
    // Both receptions are journaled (nothing the analyzer sent is lost), with identical bytes.
    expect(b.captures).toHaveLength(2);
    expect(b.captures![1]).toMatchObject({ status: 'accepted', raw_sha256: (a.captures![0] as { raw_sha256: string }).raw_sha256 });
    const counts = store.db.prepare('SELECT load_count, last_seen_at - first_seen_at AS gap FROM results').all();
    expect(counts).toEqual([...Array(3)].map(() => ({ load_count: 2, gap: 60_000 })));
  });

  it('keeps a same-key different-value result aside as a conflict: not forwarded, not overwritten, counted', () => {
    const store = fresh().open();
    store.ingest(message([result(1)]));
    const changed = result(1, { valueText: '6.3', value: 6.3, flags: ['H'] });
    expect(store.ingest(message([changed]))).toMatchObject({ inserted: 0, absorbed: 0, conflicts: 1 });
    expect(store.ingest(message([changed]))).toMatchObject({ conflicts: 1 });

    const stored = store.db.prepare('SELECT value_text, load_count FROM results').get();
    expect(stored).toEqual({ value_text: '4.1', load_count: 1 });
    expect(store.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get()).toBe(2);
    const [conflict, ...others] = store.openConflicts(10);
    expect(others).toEqual([]);
    expect(conflict).toMatchObject({ dedupKey: dedupKey(result(1)), origin: 'ingest', occurrences: 2, captureId: 2 });
    expect(conflict!.reason).toContain('value');
    expect(conflict!.reason).toContain('flags');
    // The stored version is shown exactly as the outbox carries it.
    const forwarded = store.db
      .prepare(`SELECT r.payload FROM outbox o JOIN results r ON r.id = ${resultIdSql('o.id')} LIMIT 1`)
      .pluck()
      .get();
    expect(conflict!.storedPayload).toBe(forwarded);
    expect(JSON.parse(conflict!.incomingPayload)).toMatchObject({ result: { valueText: '6.3', source: { captureId: 2 } } });
    expect(store.counts()).toEqual({ results: 1, capturesAccepted: 3, capturesRejected: 0, openConflicts: 1 });
    const actions = store.db.prepare('SELECT action FROM audit ORDER BY id').pluck().all();
    expect(actions).toEqual(['inserted', 'conflict', 'conflict']);
  });

  it('treats a genuine re-test (different resulted_at) as a new result', () => {
    const store = fresh().open();
    store.ingest(message([result(1)]));
    const retest = result(1, { resultedAt: '2026-07-01T14:45:00+00:00', valueText: '4.4', value: 4.4 });
    expect(store.ingest(message([retest]))).toMatchObject({ inserted: 1, conflicts: 0 });
    expect(store.counts().results).toBe(2);
    expect(store.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get()).toBe(4);
  });

  it('judges a key repeated inside one message by the same rules', () => {
    const store = fresh().open();
    const summary = store.ingest(message([result(1), result(1), result(1, { valueText: '9', value: 9 })]));
    expect(summary).toMatchObject({ inserted: 1, absorbed: 1, conflicts: 1 });
    expect(store.db.prepare('SELECT load_count FROM results').pluck().get()).toBe(2);
  });

  it('stores QC results without outbox rows', () => {
    const store = fresh().open();
    expect(store.ingest(message([result(1, { qc: true }), result(2)]))).toMatchObject({ inserted: 2 });
    const keys = store.db.prepare('SELECT DISTINCT dedup_key FROM outbox').pluck().all();
    expect(keys).toEqual([dedupKey(result(2))]);
  });

  it('gives each configured sink its own outbox row', () => {
    const three = fresh().open({ sinks: ['postgres', 'lims', 'archive'] });
    three.ingest(message([result(1)]));
    expect(three.db.prepare('SELECT sink FROM outbox ORDER BY id').pluck().all()).toEqual(['postgres', 'lims', 'archive']);
  });

  it('turns an invalid result into a rejection, never an exception', () => {
    const store = fresh().open();
    const bad = { ...result(2), resultedAt: '2026-07-01 14:30' };
    const summary = store.ingest(message([result(1), bad as never]));
    expect(summary).toMatchObject({ inserted: 1, rejected: 1 });
    const [listed] = store.rejectedCaptures(10);
    expect(listed!.reasons[0]).toMatchObject({ accession: 'A102', analyzerCode: 'K' });
    expect(listed!.reasons[0]!.reason).toContain('resultedAt');
  });

  it('refuses to update the audit log', () => {
    const store = fresh().open();
    store.ingest(message([result(1)]));
    expect(() => store.db.exec("UPDATE audit SET actor = 'someone'")).toThrow(/append-only/);
    store.audit({ actor: 'tech-7', action: 'acknowledged', subject: 'conflict:1', detail: { note: 'called ward' } });
    const last = store.db.prepare('SELECT actor, action, detail FROM audit ORDER BY id DESC LIMIT 1').get();
    expect(last).toEqual({ actor: 'tech-7', action: 'acknowledged', detail: '{"note":"called ward"}' });
  });

  it('shows recent results without raw captures', () => {
    const store = fresh().open();
    store.ingest(message([result(1), result(2, { flags: ['H'] })]));
    const recent = store.recentResults(5);
    expect(recent).toHaveLength(2);
    expect(recent[0]).toMatchObject({ analyteLoinc: '2823-3', loadCount: 1 });
    expect(Object.keys(recent[0]!)).not.toContain('raw');
  });
});
