// The per-instrument day figures the status page reads: kept by ingest in its transaction, on the gateway's local
// day, without a scan of the results; reprocess, replays, retention of old days, and the upgrade's backfill.
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/message.js';
import { KEEP_DAYS, KEEP_HOURS, localDay } from '../../src/store/instrument-days.js';
import { migrations } from '../../src/store/migrations.js';
import type { Store } from '../../src/store/store.js';
import { downgradeBefore, message, result, scratch } from './store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

// 2026-07-01 14:30:05 UTC, as store-fixtures' message() is received.
const RECEIVED = Date.UTC(2026, 6, 1, 14, 30, 5);
const HOUR = 3_600_000;

/** A store whose "local day" is that of UTC+10 (so 14:30 UTC is already 00:30 the next local day). */
function opened(dayOf?: (at: number) => string): Store {
  const s = scratch();
  cleanups.push(s.cleanup);
  return s.open(dayOf ? { dayOf } : {});
}

const at = (m: InboundMessage, receivedAt: number, instrumentId = 'chem-1'): InboundMessage => ({ ...m, capture: { ...m.capture, receivedAt, instrumentId } });
const plus10 = (t: number): string => new Date(t + 10 * HOUR).toISOString().slice(0, 10);

describe('instrument day figures', () => {
  it('counts messages, new results, rejections and the last message per instrument; a replay adds a message only', () => {
    const store = opened();
    store.ingest(message([result(1), result(2)]));
    store.ingest(at(message([result(1), result(2)]), RECEIVED + 60_000)); // the analyzer resent it
    store.ingest(at(message([result(3)], [{ reason: 'no mapping for analyzer code', analyzerCode: 'UBG' }]), RECEIVED + 120_000));
    store.ingest(at(message([result(9)]), RECEIVED + 30_000, 'hema-1'));
    expect(store.instrumentFigures(localDay(RECEIVED))).toEqual([
      { instrumentId: 'chem-1', messages: 3, results: 3, rejected: 1, lastMessageAt: RECEIVED + 120_000 },
      { instrumentId: 'hema-1', messages: 1, results: 1, rejected: 0, lastMessageAt: RECEIVED + 30_000 },
    ]);
  });

  it('"today" is the local day: a message after local midnight starts a new day; the last message spans days', () => {
    const store = opened(plus10);
    store.ingest(at(message([result(1)]), Date.UTC(2026, 6, 1, 13, 59, 0))); // 23:59 local on 1 July
    store.ingest(at(message([result(2)]), Date.UTC(2026, 6, 1, 14, 1, 0))); //  00:01 local on 2 July
    expect(store.instrumentFigures('2026-07-01')).toEqual([
      { instrumentId: 'chem-1', messages: 1, results: 1, rejected: 0, lastMessageAt: Date.UTC(2026, 6, 1, 14, 1, 0) },
    ]);
    expect(store.instrumentFigures('2026-07-02')).toMatchObject([{ messages: 1, results: 1 }]);
    // A quiet instrument: nothing today, and its last message is still known.
    expect(store.instrumentFigures('2026-07-09')).toEqual([
      { instrumentId: 'chem-1', messages: 0, results: 0, rejected: 0, lastMessageAt: Date.UTC(2026, 6, 1, 14, 1, 0) },
    ]);
  });

  it('a reprocess adds the results it stored to the day the message was received, and no message', () => {
    const store = opened();
    const { captureId } = store.ingest(message([result(1)], [{ reason: 'no mapping for analyzer code', analyzerCode: 'UBG' }]));
    store.reprocess(captureId, { results: [result(1), result(2)], rejections: [] }, 'web-local');
    expect(store.instrumentFigures(localDay(RECEIVED))).toEqual([{ instrumentId: 'chem-1', messages: 1, results: 2, rejected: 1, lastMessageAt: RECEIVED }]);
  });

  it(`keeps ${KEEP_DAYS} days per instrument, and always its newest`, () => {
    const store = opened();
    const day = 86_400_000;
    for (let d = 0; d < 40; d++) store.ingest(at(message([result(d)]), RECEIVED + d * day));
    store.ingest(at(message([result(100)]), RECEIVED, 'hema-1'));
    const days = store.db.prepare(`SELECT instrument_id, count(*) AS n, min(day) AS first FROM instrument_days GROUP BY 1`).all();
    expect(days).toEqual([
      { instrument_id: 'chem-1', n: KEEP_DAYS + 1, first: localDay(RECEIVED + (39 - KEEP_DAYS) * day) },
      { instrument_id: 'hema-1', n: 1, first: localDay(RECEIVED) },
    ]);
  });

  it('reads one small table: no scan of results or captures per page refresh', () => {
    const store = opened();
    const plan = store.db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT instrument_id, sum(CASE WHEN day = ? THEN messages ELSE 0 END), max(last_message_at)
      FROM instrument_days GROUP BY instrument_id ORDER BY instrument_id`,
      )
      .all('2026-07-01') as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' | ')).not.toMatch(/results|captures/);
  });

  it('an upgraded store starts from the journal and the results: the same figures as counted live', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const live = s.open();
    live.ingest(message([result(1), result(2)]));
    live.ingest(at(message([result(1)]), RECEIVED + 60_000));
    live.ingest(at(message([result(3)], [{ reason: 'no mapping for analyzer code', analyzerCode: 'UBG' }]), RECEIVED + 2 * 86_400_000));
    live.ingest(at(message([result(4)]), RECEIVED + 5_000, 'hema-1'));
    const counted = (store: Store): unknown[] => store.db.prepare('SELECT * FROM instrument_days ORDER BY instrument_id, day').all();
    const before = counted(live);
    // Back to the schema before the day figures, as a gateway upgraded from it has.
    const dayFigures = migrations.findIndex((m) => typeof m === 'string' && m.includes('CREATE TABLE instrument_days'));
    downgradeBefore(live, dayFigures);
    live.close();
    expect(counted(s.open())).toEqual(before);
  });
});

describe('instrument figures per hour', () => {
  const hourOf = (t: number): number => Math.floor(t / HOUR);

  it('counts each message in the hour it was received, a reprocess adding its results to that hour', () => {
    const store = opened();
    store.ingest(message([result(1), result(2)]));
    store.ingest(at(message([result(3)], [{ reason: 'unmapped', analyzerCode: 'UBG' }]), RECEIVED + HOUR));
    const { captureId } = store.ingest(at(message([], [{ reason: 'unmapped', analyzerCode: 'GLU' }]), RECEIVED + HOUR + 60_000));
    store.reprocess(captureId, { results: [result(4)], rejections: [] }, 'web-local');
    expect(store.instrumentHours(hourOf(RECEIVED))).toEqual([
      { instrumentId: 'chem-1', hour: hourOf(RECEIVED), messages: 1, results: 2, rejected: 0 },
      { instrumentId: 'chem-1', hour: hourOf(RECEIVED) + 1, messages: 2, results: 2, rejected: 2 },
    ]);
    expect(store.instrumentHours(hourOf(RECEIVED) + 1)).toHaveLength(1);
  });

  it(`keeps ${KEEP_HOURS} hours per instrument`, () => {
    const store = opened();
    store.ingest(message([result(1)]));
    store.ingest(at(message([result(2)]), RECEIVED + KEEP_HOURS * HOUR));
    store.ingest(at(message([result(3)]), RECEIVED + (KEEP_HOURS + 1) * HOUR));
    expect(store.instrumentHours(0).map((h) => h.hour - hourOf(RECEIVED))).toEqual([KEEP_HOURS, KEEP_HOURS + 1]);
  });
});

describe('hourly figures after an upgrade', () => {
  it('are filled from the journal and the results of the last two days, the same as counted live', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const live = s.open();
    // The backfill reads the real clock (SQLite's unixepoch()): messages from an hour and a day ago.
    const recent = Date.now() - HOUR;
    live.ingest(at(message([result(1), result(2)]), recent));
    live.ingest(at(message([result(3)], [{ reason: 'unmapped', analyzerCode: 'UBG' }]), recent - 86_400_000));
    live.ingest(at(message([result(4)]), recent - 3 * 86_400_000));
    const since = Math.floor((recent - 2 * 86_400_000) / HOUR);
    const before = live.instrumentHours(since);
    expect(before).toHaveLength(2);
    downgradeBefore(
      live,
      migrations.findIndex((m) => typeof m === 'string' && m.includes('CREATE TABLE instrument_hours')),
    );
    live.close();
    expect(s.open().instrumentHours(since)).toEqual(before);
  });
});
