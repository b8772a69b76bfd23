// Retention over a real store: what goes after the cut-off, what never goes, batches, vacuum and the timer.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/message.js';
import type { Outcome } from '../../src/delivery/contract.js';
import { pruneOnce, type Cutoffs } from '../../src/store/prune.js';
import { Retention } from '../../src/store/retention.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../fixtures/manual-clock.js';
import { result, scratch } from './store-fixtures.js';
import { OUTBOX_SLOTS } from '../../src/store/layout.js';

const DAY = 86_400_000;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function setup(options: { sinks?: string[] } = {}) {
  const s = scratch();
  cleanups.push(s.cleanup);
  const store = s.open(options.sinks ? { sinks: options.sinks } : {});
  return { ...s, store };
}

/** A message received now whose results carry accessions `from`..`from + count - 1`. */
function messageAt(receivedAt: number, from: number, count: number, raw = 'H|\\^&\rR|1|K|4.1\rL|1\r'): InboundMessage {
  const results = Array.from({ length: count }, (_, i) => result(from + i));
  return { capture: { instrumentId: 'chem-1', protocol: 'astm', receivedAt, raw: Buffer.from(raw, 'latin1') }, results, rejections: [] };
}

/** Records `outcome` for every due row of `sink` whose accession is in `accessions` (all when omitted). */
function settle(store: Store, sink: string, outcome: Outcome, accessions?: string[]): void {
  const rows = store.outbox.claimDue(sink, 10_000);
  const chosen = rows.filter((r) => !accessions || accessions.includes((JSON.parse(r.payload) as { result: { accession: string } }).result.accession));
  store.outbox.release(
    sink,
    rows.filter((r) => !chosen.includes(r)),
  );
  store.outbox.recordOutcomes(
    sink,
    chosen,
    chosen.map(() => outcome),
    chosen.map(() => null),
  );
}

function deliverAll(store: Store): void {
  for (const sink of ['postgres', 'lims']) settle(store, sink, { kind: 'delivered' });
}

function count(store: Store, sql: string): number {
  return store.db.prepare(sql).pluck().get() as number;
}

function cutoffsAt(now: number, resultsDays = 30, auditDays = 365): Cutoffs {
  return { results: now - resultsDays * DAY, audit: now - auditDays * DAY, now };
}

describe('the store is created for incremental vacuum', () => {
  it('has auto_vacuum = INCREMENTAL (2) from the first table on', () => {
    const { store } = setup();
    expect(store.db.pragma('auto_vacuum', { simple: true })).toBe(2);
  });
});

describe('pruneOnce', () => {
  it('prunes delivered results, their outbox rows and captures older than the cut-off, and keeps the newer ones', async () => {
    const { store, clock } = setup();
    store.ingest(messageAt(clock.now(), 0, 3));
    deliverAll(store);
    clock.advance(31 * DAY);
    store.ingest(messageAt(clock.now(), 10, 2));
    deliverAll(store);

    const counts = await pruneOnce(store.db, cutoffsAt(clock.now()), 500);

    expect(counts).toMatchObject({ results: 3, outbox: 6, captures: 1, audit: 0, resultsDeferred: false });
    expect(count(store, 'SELECT COUNT(*) FROM results')).toBe(2);
    expect(count(store, 'SELECT COUNT(*) FROM outbox')).toBe(4);
    expect(count(store, 'SELECT COUNT(*) FROM captures')).toBe(1);
  });

  it('keeps a result while any of its outbox rows is pending, dead or conflict, and keeps those rows and its capture', async () => {
    const { store, clock } = setup();
    store.ingest(messageAt(clock.now(), 0, 4));
    settle(store, 'postgres', { kind: 'delivered' });
    settle(store, 'lims', { kind: 'dead', reason: 'rejected by the LIMS' }, ['A100']);
    settle(store, 'lims', { kind: 'conflict', reason: 'differs' }, ['A101']);
    settle(store, 'lims', { kind: 'delivered' }, ['A102']);
    // A103 stays pending for the LIMS.
    clock.advance(31 * DAY);

    const counts = await pruneOnce(store.db, cutoffsAt(clock.now()), 500);

    expect(counts).toMatchObject({ results: 1, outbox: 2, captures: 0 });
    const left = store.db.prepare('SELECT accession FROM results ORDER BY accession').pluck().all();
    expect(left).toEqual(['A100', 'A101', 'A103']);
    const states = store.db.prepare(`SELECT sink || ':' || state FROM outbox ORDER BY id`).pluck().all();
    expect(states).toEqual(['postgres:sent', 'lims:dead', 'postgres:sent', 'lims:conflict', 'postgres:sent', 'lims:pending']);
    expect(count(store, 'SELECT COUNT(*) FROM conflicts')).toBe(1);
    expect(count(store, 'SELECT COUNT(*) FROM captures')).toBe(1);
  });

  it('keeps a result whose own outbox slot holds a row queued after the cut-off, and takes lately sent slots with it', async () => {
    const { store, clock } = setup();
    store.ingest(messageAt(clock.now(), 0, 2));
    deliverAll(store);
    clock.advance(31 * DAY);
    // A correction queued now (as a forwarded conflict does) into each result's free slot 5: pending for A100, sent for A101.
    const queue = store.db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, next_attempt_at,
      created_at, updated_at, sent_at) SELECT id * ${OUTBOX_SLOTS} + 5, 'lims', dedup_key, ?, 0, ?, ?, ? FROM results WHERE accession = ?`);
    queue.run('pending', clock.now(), clock.now(), null, 'A100');
    queue.run('sent', clock.now(), clock.now(), clock.now(), 'A101');

    const counts = await pruneOnce(store.db, cutoffsAt(clock.now()), 500);

    expect(counts).toMatchObject({ results: 1, outbox: 4 + 1 });
    expect(store.db.prepare('SELECT accession FROM results').pluck().all()).toEqual(['A100']);
    expect(store.db.prepare(`SELECT state FROM outbox`).pluck().all()).toEqual(['pending']);
  });

  it('never prunes a rejected capture, and prunes a replay capture that no result names', async () => {
    const { store, clock } = setup();
    store.ingest(messageAt(clock.now(), 0, 1));
    store.ingest({ ...messageAt(clock.now(), 5, 0), rejections: [{ reason: 'unmapped code XYZ' }] });
    store.ingest(messageAt(clock.now() + 1, 0, 1)); // the analyzer sends A100 again: absorbed
    deliverAll(store);
    clock.advance(31 * DAY);

    const counts = await pruneOnce(store.db, cutoffsAt(clock.now()), 500);

    expect(counts).toMatchObject({ results: 1, captures: 2 });
    expect(store.db.prepare('SELECT status FROM captures').pluck().all()).toEqual(['rejected']);
  });

  it('keeps an old result the analyzer re-sent lately, and its capture', async () => {
    const { store, clock } = setup();
    store.ingest(messageAt(clock.now(), 0, 1));
    deliverAll(store);
    clock.advance(29 * DAY);
    store.ingest(messageAt(clock.now(), 0, 1));
    clock.advance(2 * DAY);

    const counts = await pruneOnce(store.db, cutoffsAt(clock.now()), 500);

    expect(counts.results).toBe(0);
    expect(count(store, 'SELECT COUNT(*) FROM results')).toBe(1);
    // The first capture still names the kept result; the replay's is not old yet.
    expect(count(store, 'SELECT COUNT(*) FROM captures')).toBe(2);
  });

  it('prunes QC results (nothing to deliver) and the audit log after its own, longer period', async () => {
    const { store, clock } = setup();
    store.ingest({ ...messageAt(clock.now(), 0, 1), results: [result(0, { qc: true })] });
    clock.advance(100 * DAY);
    store.ingest(messageAt(clock.now(), 1, 1));
    deliverAll(store);
    const auditBefore = count(store, 'SELECT COUNT(*) FROM audit');

    const counts = await pruneOnce(store.db, cutoffsAt(clock.now(), 30, 90), 500);

    expect(counts).toMatchObject({ results: 1, outbox: 0, captures: 1, audit: 1 });
    const run = store.db.prepare(`SELECT * FROM audit WHERE action = 'retention-pruned'`).all() as { actor: string; at: number; detail: string }[];
    expect(run).toHaveLength(1);
    expect(run[0]!.actor).toBe('gateway');
    expect(run[0]!.at).toBe(clock.now());
    expect(JSON.parse(run[0]!.detail)).toMatchObject({ results: 1, outbox: 0, captures: 1, audit: 1 });
    expect(count(store, 'SELECT COUNT(*) FROM audit')).toBe(auditBefore - 1 + 1);
  });

  it('works in batches, pausing between them, and a stop lands between two batches', async () => {
    const { store, clock } = setup();
    for (let m = 0; m < 10; m++) store.ingest(messageAt(clock.now(), m * 10, 5));
    deliverAll(store);
    clock.advance(31 * DAY);
    let pauses = 0;
    const counts = await pruneOnce(store.db, cutoffsAt(clock.now()), 7, { pause: async () => void pauses++ });
    expect(counts).toMatchObject({ results: 50, outbox: 100, captures: 10 });
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(100 / 7) + Math.floor(50 / 7) + 1);

    const again = setup();
    for (let m = 0; m < 10; m++) again.store.ingest(messageAt(again.clock.now(), m * 10, 5));
    deliverAll(again.store);
    again.clock.advance(31 * DAY);
    const abort = new AbortController();
    let batches = 0;
    const partial = await pruneOnce(again.store.db, cutoffsAt(again.clock.now()), 10, {
      signal: abort.signal,
      pause: async () => {
        if (++batches === 3) abort.abort();
      },
    });
    // A batch never ends inside a result's rows: 10 rows read, the last result's 2 held back, 8 pruned per batch.
    expect(partial).toMatchObject({ outbox: 24, results: 0 });
    expect(count(again.store, `SELECT COUNT(*) FROM audit WHERE action = 'retention-pruned'`)).toBe(1);
  });

  it('returns the freed pages to the filesystem (incremental vacuum)', async () => {
    const { store, clock, dataDir } = setup();
    const raw = 'R|1|^^^K|4.1|mmol/L\r'.repeat(500);
    for (let m = 0; m < 200; m++) store.ingest(messageAt(clock.now(), m * 20, 20, raw));
    deliverAll(store);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const file = join(dataDir, 'labgate.db');
    const before = statSync(file).size;
    clock.advance(31 * DAY);

    const counts = await pruneOnce(store.db, cutoffsAt(clock.now()), 500);
    store.db.pragma('wal_checkpoint(TRUNCATE)');

    expect(counts.freedPages).toBeGreaterThan(0);
    expect(store.db.pragma('freelist_count', { simple: true })).toBe(0);
    expect(statSync(file).size).toBeLessThan(before / 4);
  });
});

describe('the size bound on rejected captures', () => {
  /** A rejected capture of `bytes` raw bytes (no result in it). */
  const junk = (receivedAt: number, bytes: number, tag: string): InboundMessage => ({
    capture: { instrumentId: 'hl7-1', protocol: 'hl7', receivedAt, raw: Buffer.from(tag.padEnd(bytes, '#'), 'latin1') },
    results: [],
    rejections: [{ reason: 'not an HL7 message' }],
  });

  it('keeps the newest rejected captures within the bound and prunes the older ones, whatever their age', async () => {
    const { store, clock } = setup();
    for (let i = 0; i < 40; i++) store.ingest(junk(clock.now() + i, 10_000, `junk ${i}`));
    const bound = 100_000;

    const counts = await pruneOnce(store.db, { ...cutoffsAt(clock.now()), rejectedBytes: bound }, 7);

    expect(counts.rejected).toBe(30);
    const kept = store.db.prepare(`SELECT substr(raw, 1, 8) FROM captures WHERE status = 'rejected' ORDER BY id`).pluck().all() as Buffer[];
    expect(kept.map((b) => b.toString('latin1').replace(/#+$/, ''))).toEqual(Array.from({ length: 10 }, (_, i) => `junk ${30 + i}`));
    expect(count(store, `SELECT SUM(length(raw)) FROM captures WHERE status = 'rejected'`)).toBeLessThanOrEqual(bound);
    const run = store.db.prepare(`SELECT detail FROM audit WHERE action = 'retention-pruned'`).pluck().get() as string;
    expect(JSON.parse(run)).toMatchObject({ rejected: 30, rejectedBytesKept: bound });
  });

  it('never prunes a rejected capture that a stored result came from, nor an accepted one, and without a bound none', async () => {
    const { store, clock } = setup();
    store.ingest({ ...messageAt(clock.now(), 0, 1), rejections: [{ reason: 'unmapped code XYZ' }] });
    store.ingest(messageAt(clock.now(), 1, 1));
    for (let i = 0; i < 5; i++) store.ingest(junk(clock.now(), 1_000, `junk ${i}`));

    expect((await pruneOnce(store.db, cutoffsAt(clock.now()), 500)).rejected).toBe(0);
    const counts = await pruneOnce(store.db, { ...cutoffsAt(clock.now()), rejectedBytes: 1 }, 500);

    expect(counts.rejected).toBe(5);
    expect(store.db.prepare('SELECT status, result_count FROM captures ORDER BY id').raw().all()).toEqual([
      ['rejected', 1],
      ['accepted', 1],
    ]);
  });

  it('is enforced by the retention timer and reported with what it pruned since start', async () => {
    const { store } = setup();
    const clock = new ManualClock(Date.UTC(2026, 6, 1));
    for (let i = 0; i < 30; i++) store.ingest(junk(clock.now(), 100_000, `junk ${i}`));
    const retention = new Retention({ db: store.db, clock, resultsDays: 30, auditDays: 365, rejectedMb: 1, firstRunDelayMs: 1_000 });
    retention.start();
    expect(retention.rejectedBound()).toEqual({ keptMb: 1, prunedSinceStart: 0 });
    await clock.advanceSettling(1_000);
    await retention.stop();
    expect(count(store, `SELECT COUNT(*) FROM captures WHERE status = 'rejected'`)).toBe(10);
    expect(retention.rejectedBound()).toEqual({ keptMb: 1, prunedSinceStart: 20 });
  });
});

describe('Retention', () => {
  it('runs shortly after start, then every interval, and stops cleanly', async () => {
    const { store } = setup();
    const clock = new ManualClock(Date.UTC(2026, 6, 1));
    store.ingest(messageAt(clock.now(), 0, 2));
    deliverAll(store);
    const runs = () => count(store, `SELECT COUNT(*) FROM audit WHERE action = 'retention-pruned'`);
    const retention = new Retention({ db: store.db, clock, resultsDays: 30, auditDays: 365, firstRunDelayMs: 60_000, intervalMs: 3_600_000 });
    retention.start();

    await clock.advanceSettling(59_000);
    expect(runs()).toBe(0);
    await clock.advanceSettling(1_000);
    expect(runs()).toBe(1);
    expect(count(store, 'SELECT COUNT(*) FROM results')).toBe(2);

    await clock.advanceSettling(31 * DAY);
    expect(count(store, 'SELECT COUNT(*) FROM results')).toBe(0);
    const total = runs();
    expect(total).toBeGreaterThan(700);

    await retention.stop();
    await clock.advanceSettling(10 * 3_600_000);
    expect(runs()).toBe(total);
  });
});

describe('Retention across a step of the wall clock', () => {
  it('after a step forward a year prunes nothing undelivered and nothing delivered before its time; after its time, all of it', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const clock = new ManualClock(Date.UTC(2026, 6, 1));
    const store = s.open({ now: () => clock.now(), monotonic: () => clock.monotonic() });
    store.ingest(messageAt(clock.now(), 0, 2));
    deliverAll(store);
    store.ingest(messageAt(clock.now(), 10, 1));
    await clock.advanceSettling(DAY);
    clock.step(365 * DAY);
    expect(store.steady.check()).toMatchObject({ stepMs: 365 * DAY });
    const retention = new Retention({ db: store.db, clock, steady: store.steady, resultsDays: 30, auditDays: 90, firstRunDelayMs: 1_000, intervalMs: DAY });
    retention.start();
    await clock.advanceSettling(1_000);
    expect(count(store, 'SELECT COUNT(*) FROM results')).toBe(3);
    expect(count(store, `SELECT COUNT(*) FROM audit WHERE action <> 'retention-pruned'`)).toBeGreaterThan(0);
    // Thirty days after the results came, the delivered ones go; the undelivered one stays however old.
    await clock.advanceSettling(29 * DAY);
    await retention.stop();
    expect(count(store, 'SELECT COUNT(*) FROM results')).toBe(1);
    expect(count(store, `SELECT COUNT(*) FROM outbox WHERE state = 'pending'`)).toBe(2);
  });
});
