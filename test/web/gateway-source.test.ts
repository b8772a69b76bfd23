// The gateway's StatusSource over a real Store in a temporary directory: what the page reads, and that its
// actions go through the store's audited operations with the page's actor.
import { afterEach, describe, expect, it } from 'vitest';
import type { DrainStatus } from '../../src/delivery/drain.js';
import type { PortStatus } from '../../src/transport/supervisor.js';
import { DailyCounters } from '../../src/web/status/daily-counters.js';
import { CODES_SHOWN } from '../../src/web/status/codes-view.js';
import { gatewayStatusSource } from '../../src/web/status/gateway-source.js';
import { codesSection } from '../../src/web/status/render-codes.js';
import { message, result, scratch } from '../store/store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const port = (state: PortStatus['state'], reason?: string): PortStatus => ({
  instrument: 'chem-1',
  endpoint: '/dev/serial/by-id/usb-FTDI_chem-if00',
  state,
  since: 0,
  reconnects: 0,
  failedOpens: 0,
  counters: { messages: 3, inserted: 5, rejected: 1, naks: 2, checksumErrors: 1, discarded: 0 },
  ...(reason ? { reason } : {}),
});

const drain = (sink: string, change: Partial<DrainStatus> = {}): DrainStatus => ({
  sink,
  circuit: 'closed',
  nextProbeAt: null,
  pausedSince: null,
  lastError: null,
  delivered: 0,
  deadLettered: 0,
  conflicts: 0,
  recentRate: 0,
  batchesInFlight: 0,
  ...change,
});

function world() {
  const s = scratch();
  cleanups.push(s.cleanup);
  const store = s.open();
  store.ingest(message([result(1), result(2)]));
  const lims = store.outbox.claimDue('lims', 10);
  store.outbox.recordOutcomes(
    'lims',
    lims,
    lims.map(() => ({ kind: 'dead', reason: '422 unknown test' })),
    lims.map(() => null),
  );
  const pg = store.outbox.claimDue('postgres', 10);
  store.outbox.recordOutcomes(
    'postgres',
    pg,
    pg.map(() => ({ kind: 'delivered' })),
    pg.map(() => null),
  );
  store.ingest(message([result(1, { valueText: '6.3', value: 6.3 })]));
  const rejected = store.ingest(message([], [{ reason: 'no mapping for analyzer code', analyzerCode: 'UBG' }], 'H|\\^&\rR|1|UBG|1\rL|1\r'));
  const drains = [drain('postgres'), drain('lims', { circuit: 'open', nextProbeAt: s.clock.now() + 30_000, lastError: 'ECONNREFUSED' })];
  const woken: string[] = [];
  const source = gatewayStatusSource({
    gatewayId: 'gw-1',
    now: s.clock.now,
    store,
    instruments: () => [port('error', 'EIO: unplugged')],
    drains: () => drains,
    wake: (sink) => woken.push(sink),
    reprocess: (id, actor) => store.reprocess(id, { results: [result(3)], rejections: [] }, actor),
  });
  return { store, source, woken, rejectedId: rejected.captureId };
}

describe('gatewayStatusSource over a real store', () => {
  it('reads instruments, sinks, results and every work queue', async () => {
    const { source } = world();
    const snap = await source.snapshot();
    // Messages, results and rejections from the store (three messages: two new results, a conflict, a rejection);
    // NAKs from the supervisor, which alone sees the link.
    expect(snap.instruments).toEqual([
      expect.objectContaining({
        id: 'chem-1',
        state: 'error',
        reason: 'EIO: unplugged',
        messagesToday: 3,
        resultsToday: 2,
        naks: 2,
        rejected: 1,
        lastMessageAt: Date.UTC(2026, 6, 1, 14, 30, 5),
      }),
    ]);
    const lims = snap.sinks.find((k) => k.sink === 'lims')!;
    expect(lims).toMatchObject({ dead: 2, pending: 0, circuit: 'paused', reason: 'ECONNREFUSED' });
    expect(snap.sinks.find((k) => k.sink === 'postgres')).toMatchObject({ circuit: 'delivering', deliveredLastHour: 2, dead: 0 });
    expect(snap.recentResults.map((r) => r.accession).sort()).toEqual(['A101', 'A102']);
    expect(snap.deadLetters).toHaveLength(2);
    expect(snap.deadLetters[0]).toMatchObject({ sink: 'lims', reason: '422 unknown test' });
    expect(snap.conflicts).toHaveLength(1);
    expect(snap.conflicts[0]!.stored).toMatchObject({ accession: 'A101', valueText: '4.1', analyzerCode: 'K' });
    expect(snap.conflicts[0]!.incoming).toMatchObject({ accession: 'A101', valueText: '6.3' });
    expect(snap.rejectedCaptures).toEqual([
      expect.objectContaining({ instrumentId: 'chem-1', reasons: [{ reason: 'no mapping for analyzer code', analyzerCode: 'UBG' }] }),
    ]);
  });

  it('retries dead letters through the store, audited with the actor, and wakes the drain', async () => {
    const { store, source, woken } = world();
    const [first] = (await source.snapshot()).deadLetters;
    expect(await source.retryDeadLetter('lims', { key: first!.dedupKey }, 'web:0a1b2c3d')).toEqual({
      kind: 'done',
      message: '1 dead letter for lims queued again.',
    });
    // The next page shows it at once, though the counts are shared and nothing else changed.
    expect((await source.snapshot()).sinks.find((k) => k.sink === 'lims')).toMatchObject({ dead: 1, pending: 1 });
    expect(await source.retryDeadLetter('lims', { key: first!.dedupKey }, 'web:0a1b2c3d')).toMatchObject({ kind: 'not-found' });
    expect(await source.retryDeadLetter('lims', 'all', 'web-local')).toMatchObject({ kind: 'done', message: '1 dead letter for lims queued again.' });
    expect(woken).toEqual(['lims', 'lims']);
    const audit = store.db.prepare(`SELECT actor, action FROM audit WHERE action = 'dead-letter-retry' ORDER BY id`).all();
    expect(audit).toEqual([
      { actor: 'web:0a1b2c3d', action: 'dead-letter-retry' },
      { actor: 'web-local', action: 'dead-letter-retry' },
    ]);
  });

  it('reprocesses a rejected capture with the actor; says plainly what is not wired', async () => {
    const { store, source, rejectedId } = world();
    expect(await source.reprocessCapture(rejectedId, 'web-local')).toMatchObject({ kind: 'done', message: expect.stringContaining('1 stored') });
    expect(await source.reprocessCapture(rejectedId, 'web-local')).toMatchObject({ kind: 'not-found' });
    expect(store.db.prepare(`SELECT actor FROM audit WHERE action = 'reprocessed'`).pluck().all()).toEqual(['web-local']);
  });

  it("shows each result's delivery per sink, its analyzer code and range, and names the sample of a dead letter", async () => {
    const { source } = world();
    const snap = await source.snapshot();
    const a101 = snap.recentResults.find((r) => r.accession === 'A101')!;
    expect(a101).toMatchObject({ analyzerCode: 'K', referenceRange: '3.5-5.1' });
    expect(a101.delivery).toEqual([
      { sink: 'postgres', state: 'sent' },
      { sink: 'lims', state: 'dead' },
    ]);
    expect(snap.deadLetters.map((d) => [d.accession, d.loinc])).toEqual([
      ['A101', '2823-3'],
      ['A102', '2823-3'],
    ]);
  });

  it('resolves conflicts through the store with the actor, and wakes the drains a correction was queued to', async () => {
    const { store, source, woken } = world();
    const [conflict] = (await source.snapshot()).conflicts;
    expect(await source.resolveConflict(conflict!.id, 'forward', 'web:0a1b2c3d')).toEqual({
      kind: 'done',
      message: `Conflict ${conflict!.id}: forwarded to postgres and lims as a correction.`,
    });
    expect(await source.resolveConflict(conflict!.id, 'keep', 'web:0a1b2c3d')).toMatchObject({ kind: 'not-found' });
    expect(await source.resolveConflict(999, 'keep', 'web:0a1b2c3d')).toMatchObject({ kind: 'not-found' });
    expect(woken).toEqual(['postgres', 'lims']);
    expect(store.db.prepare(`SELECT actor FROM audit WHERE action = 'conflict-forwarded'`).pluck().all()).toEqual(['web:0a1b2c3d']);
    const a101 = (await source.snapshot()).recentResults.find((r) => r.accession === 'A101')!;
    expect(a101).toMatchObject({
      valueText: '6.3',
      delivery: [
        { sink: 'postgres', state: 'pending' },
        { sink: 'lims', state: 'pending' },
      ],
    });
  });

  it('says plainly what a store without conflict resolution cannot do', async () => {
    const { store } = world();
    const older = {
      outbox: store.outbox,
      recentResults: (n: number) => store.recentResults(n),
      openConflicts: (n: number) => store.openConflicts(n),
      rejectedCaptures: (n: number) => store.rejectedCaptures(n),
    };
    const source = gatewayStatusSource({ gatewayId: 'gw-1', now: () => 0, store: older, instruments: () => [], drains: () => [] });
    expect((await source.snapshot()).recentResults[0]!.delivery).toEqual([]);
    expect(await source.resolveConflict(1, 'keep', 'web-local')).toMatchObject({ kind: 'failed' });
  });
});

describe('DailyCounters', () => {
  const day = (now: number): string => `d${Math.floor(now / 1000)}`;

  it("counts the link's NAKs from the start of the day, and from process start on the first day", () => {
    const daily = new DailyCounters(day);
    const p = port('connected');
    expect(daily.today(p, 500, undefined).naks).toBe(2);
    p.counters.naks = 10;
    expect(daily.today(p, 1500, undefined).naks).toBe(0);
    p.counters.naks = 14;
    expect(daily.today(p, 1900, undefined).naks).toBe(4);
  });

  it("takes messages, results, rejections and the last message from the store's figures, whatever the supervisor counted", () => {
    const daily = new DailyCounters(day);
    const p = { ...port('connected'), lastMessageAt: 400 };
    const stored = { instrumentId: 'chem-1', messages: 56, results: 112, rejected: 0, lastMessageAt: 300 };
    // The last message: the port's while it has one (kept on the monotonic clock, right across a step of the wall
    // clock), else the store's (a gateway that has received nothing since it started).
    expect(daily.today(p, 500, stored)).toEqual({ messages: 56, results: 112, rejected: 0, naks: 2, checksumErrors: 1, lastMessageAt: 400 });
    expect(daily.today({ ...p, lastMessageAt: undefined }, 500, stored)).toMatchObject({ lastMessageAt: 300 });
    expect(daily.today(p, 500, undefined)).toMatchObject({ messages: 0, results: 0, rejected: 0, lastMessageAt: 400 });
    // A store that keeps no figures: the supervisor's since-start count.
    expect(daily.today(p, 500, null)).toMatchObject({ messages: 3, results: 5, rejected: 1, lastMessageAt: 400 });
  });
});

describe('codes seen through the gateway source', () => {
  it('lists every code of each configured instrument against its mapping now: not mapped first, then a unit that differs, then mapped', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const store = s.open();
    const observed = (code: string, value: string, unit: string | null) => ({
      reason: `unmapped test code '${code}'`,
      analyzerCode: code,
      observed: { value, unit },
    });
    store.ingest(message([result(1)], [observed('GLU', '5.4', 'mmol/L'), observed('NA', '140', 'mmol/L'), observed('CRP', '\u202E0.5', 'mg/L')]));
    const mapping = [
      { code: 'K', loinc: '2823-3', unit: 'mmol/L' },
      { code: 'CRP', loinc: '1988-5', unit: 'mg/dL' },
    ];
    const source = gatewayStatusSource({
      gatewayId: 'gw-1',
      now: s.clock.now,
      store,
      drains: () => [],
      instruments: () => [port('connected'), { ...port('connected'), instrument: 'hema-1' }],
      mappingOf: (id) => (id === 'chem-1' ? mapping : undefined),
    });
    const { codesSeen } = await source.snapshot();
    expect(codesSeen).toEqual([
      {
        instrumentId: 'chem-1',
        codes: [
          expect.objectContaining({
            code: 'CRP',
            loinc: '1988-5',
            problem: 'unit differs',
            lastValue: '\u202E0.5',
            yaml: '- { code: "CRP", loinc: "1988-5", unit: "mg/L" }',
          }),
          expect.objectContaining({
            code: 'GLU',
            loinc: null,
            problem: 'not mapped',
            seen: 1,
            lastValue: '5.4',
            lastUnit: 'mmol/L',
            yaml: '- { code: "GLU", loinc: "", unit: "mmol/L" }',
          }),
          expect.objectContaining({ code: 'NA', problem: 'not mapped' }),
          expect.objectContaining({ code: 'K', loinc: '2823-3', problem: null, yaml: '- { code: "K", loinc: "2823-3", unit: "mmol/L" }' }),
        ],
        total: 4,
        needMapping: 3,
        page: 1,
        pages: 1,
      },
    ]);
  });

  it(`lists at most ${CODES_SHOWN} codes of an instrument, those needing a mapping first, then the newest, and says how many it keeps`, async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const store = s.open();
    const unmapped = (code: string) => ({ reason: `unmapped test code '${code}'`, analyzerCode: code, observed: { value: '1', unit: null } });
    // Four messages of a hundred codes a minute apart, then a mapped one.
    for (let m = 0; m < 4; m++) {
      const msg = message(
        [],
        Array.from({ length: 100 }, (_, i) => unmapped(`M${m}C${i}`)),
      );
      store.ingest({ ...msg, capture: { ...msg.capture, receivedAt: msg.capture.receivedAt + m * 60_000 } });
    }
    store.ingest(message([result(1)]));
    const source = gatewayStatusSource({ gatewayId: 'gw-1', now: s.clock.now, store, drains: () => [], instruments: () => [port('connected')] });
    const snapshot = await source.snapshot();
    const [chem] = snapshot.codesSeen!;
    expect(chem).toMatchObject({ instrumentId: 'chem-1', total: 401, needMapping: 401, page: 1, pages: 5 });
    expect(chem!.codes).toHaveLength(CODES_SHOWN);
    expect(chem!.codes.every((c) => c.code.startsWith('M3C'))).toBe(true);
    const section = codesSection(snapshot).value;
    expect(section.match(/<tr data-code=/g)).toHaveLength(CODES_SHOWN);
    expect(section).toContain('Codes 1-100 of the 401 kept are listed');
    expect(section).toContain('href="/codes?instrument=chem-1&amp;page=2"');
  });
});

describe('the day at a glance through the gateway source', () => {
  it('reads the hourly figures, the deliveries and the backlog samples the store keeps', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const store = s.open();
    const received = s.clock.now() - 30 * 60_000;
    const m = message([result(1), result(2)]);
    store.ingest({ ...m, capture: { ...m.capture, receivedAt: received } });
    const rows = store.outbox.claimDue('lims', 10);
    store.outbox.recordOutcomes(
      'lims',
      rows,
      rows.map(() => ({ kind: 'delivered' })),
      rows.map(() => null),
    );
    store.sinkFigures.sampleBacklog(
      [
        { sink: 'lims', pending: 2 },
        { sink: 'postgres', pending: 2 },
      ],
      s.clock.now() - 60_000,
    );
    const source = gatewayStatusSource({
      gatewayId: 'gw-1',
      now: s.clock.now,
      store,
      drains: () => [drain('postgres'), drain('lims')],
      instruments: () => [port('connected')],
    });
    const { day } = await source.snapshot();
    const slot = 23 - (Math.floor(s.clock.now() / 3_600_000) - Math.floor(received / 3_600_000));
    expect(day?.instruments).toEqual([expect.objectContaining({ id: 'chem-1' })]);
    expect(day?.instruments[0]!.results[slot]).toBe(2);
    const lims = day?.sinks.find((k) => k.sink === 'lims');
    expect(lims?.delivered[23]).toBe(2);
    expect(lims?.backlog).toEqual([
      { at: s.clock.now() - 60_000, pending: 2 },
      { at: s.clock.now(), pending: 0 },
    ]);
  });
});
