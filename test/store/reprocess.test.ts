import { describe, expect, it } from 'vitest';
import { isLabgateError } from '../../src/errors.js';
import { dedupKey } from '../../src/result.js';
import { message, result, scratchPerTest } from './store-fixtures.js';

const fresh = scratchPerTest();

const unmapped = { reason: "unmapped test code 'NA'", analyzerCode: 'NA', accession: 'A102' };

describe('rejected captures', () => {
  it('journals a message that cannot be normalized, with the reason and its exact bytes', () => {
    const store = fresh().open();
    const raw = 'H|\\^&\rR|1|^^^NA|140|mmol/L\rL|1\r';
    const summary = store.ingest(message([], [unmapped], raw));
    expect(summary).toEqual({ captureId: 1, inserted: 0, absorbed: 0, conflicts: 0, rejected: 1 });
    expect(store.rejectedCaptures(10)).toEqual([
      { id: 1, instrumentId: 'chem-1', protocol: 'astm', receivedAt: message([]).capture.receivedAt, reasons: [unmapped], reasonCount: 1 },
    ]);
    expect(store.captureRaw(1)).toEqual(Buffer.from(raw, 'latin1'));
    expect(store.captureRaw(99)).toBeUndefined();
    expect(store.counts()).toMatchObject({ capturesAccepted: 0, capturesRejected: 1 });
    const audit = store.db.prepare('SELECT actor, action, subject, detail FROM audit').all();
    expect(audit).toEqual([{ actor: 'gateway', action: 'rejected', subject: 'capture:1', detail: JSON.stringify(unmapped) }]);
  });

  it('reprocesses after a configuration fix, counting the results already stored from it only once', () => {
    const s = fresh();
    const store = s.open();
    // The potassium was mapped; the sodium was not.
    store.ingest(message([result(1)], [unmapped]));
    s.clock.advance(3_600_000);
    const sodium = result(2, { analyteLoinc: '2951-2', valueText: '140', value: 140 });
    const fixed = { results: [result(1), sodium], rejections: [] };
    const summary = store.reprocess(1, fixed, 'tech-7');
    expect(summary).toEqual({ captureId: 1, inserted: 1, absorbed: 1, conflicts: 0, rejected: 0 });

    const rows = store.db.prepare('SELECT accession, load_count, capture_id FROM results ORDER BY accession').all();
    expect(rows).toEqual([
      { accession: 'A101', load_count: 1, capture_id: 1 },
      { accession: 'A102', load_count: 1, capture_id: 1 },
    ]);
    expect(store.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get()).toBe(4);
    expect(store.rejectedCaptures(10)).toEqual([]);
    const capture = store.db.prepare('SELECT status, reasons, counted_keys, result_count FROM captures').get();
    expect(capture).toEqual({ status: 'accepted', reasons: null, counted_keys: null, result_count: 2 });
    const audit = store.db.prepare("SELECT action, subject FROM audit WHERE actor = 'tech-7' ORDER BY id").all();
    expect(audit).toEqual([
      { action: 'inserted', subject: dedupKey(sodium) },
      { action: 'reprocessed', subject: 'capture:1' },
    ]);
  });

  it('stays rejected while the fix is incomplete, and a second reprocess still counts nothing twice', () => {
    const store = fresh().open();
    store.ingest(message([result(1), result(1)], [unmapped]));
    expect(store.db.prepare('SELECT load_count FROM results').pluck().get()).toBe(2);
    const stillBroken = { results: [result(1), result(1)], rejections: [unmapped] };
    expect(store.reprocess(1, stillBroken, 'tech-7')).toMatchObject({ inserted: 0, absorbed: 2, rejected: 1 });
    expect(store.reprocess(1, stillBroken, 'tech-7')).toMatchObject({ inserted: 0, absorbed: 2, rejected: 1 });
    expect(store.db.prepare('SELECT load_count FROM results').pluck().get()).toBe(2);
    expect(store.rejectedCaptures(10)).toHaveLength(1);
  });

  it('records a conflict once when the fixed configuration reads a stored result differently', () => {
    const store = fresh().open();
    store.ingest(message([result(1)], [unmapped]));
    const reread = { results: [result(1, { unit: 'mEq/L' })], rejections: [] };
    expect(store.reprocess(1, reread, 'tech-7')).toMatchObject({ conflicts: 1 });
    expect(store.openConflicts(10)).toEqual([expect.objectContaining({ occurrences: 1, reason: expect.stringContaining('unit') })]);
    expect(store.db.prepare('SELECT unit FROM results').pluck().get()).toBe('mmol/L');
  });

  it('refuses to reprocess an accepted or unknown capture, and changes nothing', () => {
    const store = fresh().open();
    store.ingest(message([result(1)]));
    const before = store.db.prepare('SELECT COUNT(*) FROM audit').pluck().get();
    for (const id of [1, 42]) {
      let caught: unknown;
      try {
        store.reprocess(id, { results: [result(1)], rejections: [] }, 'tech-7');
      } catch (err) {
        caught = err;
      }
      expect(isLabgateError(caught, 'USAGE')).toBe(true);
    }
    expect(store.db.prepare('SELECT COUNT(*) FROM audit').pluck().get()).toBe(before);
  });
});
