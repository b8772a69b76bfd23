// store.resolveConflict: a person's audited decision on a conflict, in one transaction. Keep sends nothing;
// forward makes the other version travel to the sinks as a correction.
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/payload.js';
import { clinicalContent, clinicalDigest, dedupKey } from '../../src/result.js';
import type { Outcome } from '../../src/delivery/contract.js';
import type { Store } from '../../src/store/store.js';
import { message, result, scratchPerTest } from './store-fixtures.js';
import { resultIdSql } from '../../src/store/layout.js';

const fresh = scratchPerTest();

type OutboxRow = {
  id: number;
  sink: string;
  state: string;
  attempts: number;
  etag: string | null;
  payload: string;
  payload_sha256: string;
  next_attempt_at: number;
};
const outbox = (store: Store): OutboxRow[] =>
  store.db.prepare(`SELECT o.*, r.payload, r.payload_sha256 FROM outbox o JOIN results r ON r.id = ${resultIdSql('o.id')} ORDER BY o.id`).all() as OutboxRow[];
const key = dedupKey(result(1));
const corrected = result(1, { valueText: '6.3', value: 6.3 });

// A result delivered to both sinks (the LIMS answered with an ETag), then the analyzer sends another value.
function delivered(s: ReturnType<typeof fresh>): Store {
  const store = s.open();
  store.ingest(message([result(1)]));
  const pg = store.outbox.claimDue('postgres', 10);
  store.outbox.recordOutcomes(
    'postgres',
    pg,
    pg.map(() => ({ kind: 'delivered' })),
    pg.map(() => null),
  );
  const lims = store.outbox.claimDue('lims', 10);
  store.outbox.recordOutcomes(
    'lims',
    lims,
    lims.map(() => ({ kind: 'delivered', etag: '"v1"' })),
    lims.map(() => null),
  );
  s.clock.advance(60_000);
  store.ingest(message([corrected]));
  return store;
}

describe('store.resolveConflict', () => {
  it('keep: the stored version stays, nothing is queued, the decision is audited with the actor', () => {
    const s = fresh();
    const store = delivered(s);
    const before = outbox(store);
    const [conflict] = store.openConflicts(10);
    expect(store.resolveConflict(conflict!.id, 'keep', 'web:0a1b')).toEqual({ kind: 'done', queued: [] });
    expect(outbox(store)).toEqual(before);
    expect(store.recentResults(1)[0]).toMatchObject({ valueText: '4.1' });
    expect(store.openConflicts(10)).toEqual([]);
    const row = store.db.prepare('SELECT resolution, resolved_by, resolved_at FROM conflicts').get();
    expect(row).toEqual({ resolution: 'kept', resolved_by: 'web:0a1b', resolved_at: s.clock.now() });
    const audit = store.db.prepare(`SELECT actor, action, subject, detail FROM audit WHERE action LIKE 'conflict-%'`).all();
    expect(audit).toEqual([
      { actor: 'web:0a1b', action: 'conflict-kept', subject: key, detail: JSON.stringify({ conflictId: conflict!.id, origin: 'ingest', queued: [] }) },
    ]);
  });

  it('forward (ingest): the incoming version becomes the stored result and goes to every sink as a correction', () => {
    const s = fresh();
    const store = delivered(s);
    const [conflict] = store.openConflicts(10);
    s.clock.advance(5_000);
    expect(store.resolveConflict(conflict!.id, 'forward', 'web:0a1b')).toEqual({ kind: 'done', queued: ['postgres', 'lims'] });

    const stored = store.db.prepare('SELECT value_text, value, clinical_digest, capture_id, load_count FROM results').get();
    expect(stored).toEqual({ value_text: '6.3', value: 6.3, clinical_digest: clinicalDigest(corrected), capture_id: 2, load_count: 1 });
    const rows = outbox(store);
    expect(rows.map((r) => [r.sink, r.state, r.attempts, r.etag, r.next_attempt_at])).toEqual([
      ['postgres', 'pending', 0, null, s.clock.now()],
      ['lims', 'pending', 0, '"v1"', s.clock.now()],
    ]);
    // The incoming version, naming the version it replaces (central PostgreSQL's compare-and-set).
    const forwarded = { ...JSON.parse(conflict!.incomingPayload), supersedes: clinicalContent(result(1)) };
    for (const row of rows) {
      expect(JSON.parse(row.payload)).toEqual(forwarded);
      expect(row.payload_sha256).toBe(sha256Hex(row.payload));
    }
    expect(store.outbox.counts().map((c) => [c.sink, c.pending, c.sent])).toEqual([
      ['lims', 1, 0],
      ['postgres', 1, 0],
    ]);
    expect(store.db.prepare(`SELECT actor, action FROM audit WHERE action = 'conflict-forwarded'`).all()).toEqual([
      { actor: 'web:0a1b', action: 'conflict-forwarded' },
    ]);

    // The corrected version is now what is stored: its replay is absorbed, the old one is a new conflict.
    expect(store.ingest(message([corrected]))).toMatchObject({ absorbed: 1, conflicts: 0 });
    expect(store.ingest(message([result(1)]))).toMatchObject({ absorbed: 0, conflicts: 1 });
    expect(store.openConflicts(10).map((c) => JSON.parse(c.incomingPayload).result.valueText)).toEqual(['4.1']);
  });

  it('forward (ingest): an outcome for the old version still in flight never marks the correction sent', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([result(1)]));
    const inFlight = store.outbox.claimDue('postgres', 10);
    store.ingest(message([corrected]));
    const [conflict] = store.openConflicts(10);
    store.resolveConflict(conflict!.id, 'forward', 'web-local');
    store.outbox.recordOutcomes(
      'postgres',
      inFlight,
      inFlight.map(() => ({ kind: 'delivered' })),
      inFlight.map(() => null),
    );
    const [again] = store.outbox.claimDue('postgres', 10);
    expect(again).toMatchObject({ id: inFlight[0]!.id });
    expect(JSON.parse(again!.payload)).toEqual({ ...JSON.parse(conflict!.incomingPayload), supersedes: clinicalContent(result(1)) });
  });

  it('forward (ingest): deliveries of other results in flight across the correction are still marked sent', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([result(1), result(2)]));
    const inFlight = store.outbox.claimDue('postgres', 10);
    expect(inFlight).toHaveLength(2);
    store.ingest(message([corrected]));
    const [conflict] = store.openConflicts(10);
    store.resolveConflict(conflict!.id, 'forward', 'web-local');
    store.outbox.recordOutcomes(
      'postgres',
      inFlight,
      inFlight.map(() => ({ kind: 'delivered' })),
      inFlight.map(() => null),
    );
    const pending = outbox(store).filter((r) => r.sink === 'postgres' && r.state === 'pending');
    expect(pending.map((r) => JSON.parse(r.payload).result.valueText)).toEqual(['6.3']);
    expect(outbox(store).filter((r) => r.sink === 'postgres' && r.state === 'sent')).toHaveLength(1);
    // Claimed after the correction: marked by id, and it sticks.
    const again = store.outbox.claimDue('postgres', 10);
    store.outbox.recordOutcomes(
      'postgres',
      again,
      again.map(() => ({ kind: 'delivered' })),
      again.map(() => null),
    );
    expect(
      outbox(store)
        .filter((r) => r.sink === 'postgres')
        .map((r) => r.state),
    ).toEqual(['sent', 'sent']);
  });

  it('forward (ingest) also queues a sink that has no row for the result yet', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([result(1)]));
    store.ingest(message([corrected]));
    store.close();
    const wider = s.open({ sinks: ['postgres', 'lims', 'archive'] });
    const [conflict] = wider.openConflicts(10);
    expect(wider.resolveConflict(conflict!.id, 'forward', 'web-local')).toEqual({ kind: 'done', queued: ['postgres', 'lims', 'archive'] });
    expect(wider.deliveryStates(wider.recentResults(1)).get(key)).toEqual([
      { sink: 'postgres', state: 'pending' },
      { sink: 'lims', state: 'pending' },
      { sink: 'archive', state: 'pending' },
    ]);
  });

  it('forward (ingest) of a QC result corrects the record and sends nothing', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([result(1, { qc: true })]));
    store.ingest(message([result(1, { qc: true, valueText: '6.3', value: 6.3 })]));
    const [conflict] = store.openConflicts(10);
    expect(store.resolveConflict(conflict!.id, 'forward', 'web-local')).toEqual({ kind: 'done', queued: [] });
    expect(store.recentResults(1)[0]).toMatchObject({ valueText: '6.3' });
    expect(outbox(store)).toEqual([]);
  });

  it("forward (sink): labgate's version is queued again to that sink only, keeping its ETag", () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([result(1)]));
    const lims = store.outbox.claimDue('lims', 10);
    store.outbox.recordOutcomes('lims', lims, [{ kind: 'delivered', etag: '"v1"' }], [null]);
    store.db.prepare(`UPDATE outbox SET state = 'pending' WHERE sink = 'lims'`).run();
    const again = store.outbox.claimDue('lims', 10);
    store.outbox.recordOutcomes('lims', again, [{ kind: 'conflict', reason: 'the LIMS holds different clinical content', theirs: '{"value":"9"}' }], [null]);
    const [conflict] = store.openConflicts(10);
    expect(conflict).toMatchObject({ origin: 'lims', storedPayload: '{"value":"9"}' });

    s.clock.advance(1_000);
    expect(store.resolveConflict(conflict!.id, 'forward', 'web-local')).toEqual({ kind: 'done', queued: ['lims'] });
    const row = outbox(store).find((r) => r.sink === 'lims')!;
    expect(row).toMatchObject({ state: 'pending', attempts: 0, etag: '"v1"', next_attempt_at: s.clock.now(), payload: lims[0]!.payload });
    expect(outbox(store).find((r) => r.sink === 'postgres')).toMatchObject({ state: 'pending', attempts: 0 });
    expect(store.recentResults(1)[0]).toMatchObject({ valueText: '4.1' });
  });

  it('forward (sink): names the version the sink holds when its conflict outcome reported an ETag', () => {
    const s = fresh();
    const store = s.open();
    store.ingest(message([result(1)]));
    const lims = store.outbox.claimDue('lims', 10);
    // A sink that reports the ETag of the version it holds (the LIMS after its GET).
    const conflict: Outcome = { kind: 'conflict', reason: 'the LIMS holds different clinical content', theirs: '{}', etag: '"v7"' };
    store.outbox.recordOutcomes('lims', lims, [conflict], [null]);
    store.resolveConflict(store.openConflicts(10)[0]!.id, 'forward', 'web-local');
    expect(outbox(store).find((r) => r.sink === 'lims')).toMatchObject({ state: 'pending', etag: '"v7"' });
  });

  it('answers not-found and already-resolved, and changes nothing then', () => {
    const s = fresh();
    const store = delivered(s);
    const [conflict] = store.openConflicts(10);
    expect(store.resolveConflict(999, 'keep', 'web-local')).toEqual({ kind: 'not-found' });
    store.resolveConflict(conflict!.id, 'keep', 'web-local');
    const before = outbox(store);
    expect(store.resolveConflict(conflict!.id, 'forward', 'web-local')).toEqual({ kind: 'already-resolved' });
    expect(outbox(store)).toEqual(before);
    expect(store.db.prepare(`SELECT COUNT(*) FROM audit WHERE action LIKE 'conflict-%'`).pluck().get()).toBe(1);
  });
});
