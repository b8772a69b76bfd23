// A person forwards labgate's version over a LIMS conflict: the conflict carries the LIMS's current ETag, the
// re-queued row sends it as If-Match, and the other writer's change is superseded knowingly, exactly once.
// Somebody editing again after the conflict was reported makes the forward fail its precondition: a new conflict.
import { afterEach, describe, expect, it } from 'vitest';
import { sampleResult, sampleRow } from '../../src/lims-server/sample-rows.js';
import type { OutboxRow, Outcome } from '../../src/delivery/contract.js';
import { rig, type Rig } from './harness.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});
const signal = new AbortController().signal;

/** What the store does on a forward: the same row (labgate's version) queued again with the conflict's ETag. */
function forwarded(row: OutboxRow, conflict: Outcome | undefined): OutboxRow {
  if (conflict?.kind !== 'conflict' || conflict.etag === undefined) throw new Error(`expected a conflict with an etag, got ${JSON.stringify(conflict)}`);
  return { ...row, etag: conflict.etag, attempts: 0 };
}

const editedTo = (valueText: string) => (d: Record<string, unknown>) => ({
  ...d,
  result: { ...(d.result as object), valueText, value: Number(valueText), flags: ['edited'] },
});

describe('LIMS corrections forwarded by a person', () => {
  it('concurrent edit → conflict with their ETag → forward with If-Match → the correction is applied once', async () => {
    r = await rig();
    const row = sampleRow(1, sampleResult(1));
    const [first] = await r.sink.deliver([row], signal);
    const ours = first?.kind === 'delivered' ? first.etag! : null;
    r.server.editRecord(row.recordId, editedTo('5.0'));
    const fix = sampleRow(1, sampleResult(1, { valueText: '4.9', value: 4.9, status: 'correction' }), ours);
    const [conflict] = await r.sink.deliver([fix], signal);
    expect(conflict).toEqual({
      kind: 'conflict',
      reason: expect.any(String),
      theirs: expect.stringContaining('"valueText":"5.0"'),
      etag: r.server.record(row.recordId)!.etag,
    });
    expect(r.server.appliedCount(row.recordId)).toBe(1);

    const forward = forwarded(fix, conflict);
    const [done] = await r.sink.deliver([forward], signal);
    expect(done).toEqual({ kind: 'delivered', etag: r.server.record(row.recordId)!.etag });
    expect(r.server.record(row.recordId)!.document).toMatchObject({ result: { valueText: '4.9', status: 'correction', flags: [] } });
    expect(r.server.appliedCount(row.recordId)).toBe(2);

    // The "sent" mark was lost and the forward goes again: the LIMS replays its answer, nothing is applied twice.
    const [again] = await r.sink.deliver([forward], signal);
    expect(again).toMatchObject({ kind: 'delivered' });
    expect(r.server.appliedCount(row.recordId)).toBe(2);
  });

  it('somebody else created the record first: the forward replaces it with If-Match instead of If-None-Match', async () => {
    r = await rig();
    const row = sampleRow(1, sampleResult(1));
    r.server.editRecord(row.recordId, () => ({ recordId: row.recordId, result: { ...sampleResult(1), valueText: '7.7', value: 7.7 } }));
    const [conflict] = await r.sink.deliver([row], signal);
    expect(conflict).toMatchObject({ kind: 'conflict', etag: r.server.record(row.recordId)!.etag });
    expect(await r.sink.deliver([forwarded(row, conflict)], signal)).toEqual([{ kind: 'delivered', etag: r.server.record(row.recordId)!.etag }]);
    expect(r.server.record(row.recordId)!.document).toMatchObject({ result: { valueText: sampleResult(1).valueText } });
    expect(r.server.appliedCount(row.recordId)).toBe(1);
  });

  it('an edit after the conflict was reported wins again: the stale forward is a new conflict, nothing overwritten', async () => {
    r = await rig();
    const row = sampleRow(1, sampleResult(1));
    const [first] = await r.sink.deliver([row], signal);
    r.server.editRecord(row.recordId, editedTo('5.0'));
    const fix = sampleRow(1, sampleResult(1, { valueText: '4.9', value: 4.9 }), first?.kind === 'delivered' ? first.etag! : null);
    const [conflict] = await r.sink.deliver([fix], signal);
    r.server.editRecord(row.recordId, editedTo('5.2'));
    const [again] = await r.sink.deliver([forwarded(fix, conflict)], signal);
    expect(again).toMatchObject({ kind: 'conflict', theirs: expect.stringContaining('"valueText":"5.2"'), etag: r.server.record(row.recordId)!.etag });
    expect(again?.kind === 'conflict' && again.etag).not.toBe(conflict?.kind === 'conflict' && conflict.etag);
    expect(r.server.record(row.recordId)!.document).toMatchObject({ result: { valueText: '5.2' } });
    expect(r.server.appliedCount(row.recordId)).toBe(1);
  });
});
