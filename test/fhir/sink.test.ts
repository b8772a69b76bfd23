// The FHIR sink against the FHIR test server: exactly once by identity, corrections with If-Match, conflicts for
// somebody else's change, one bad row dead-lettered alone, both ways of creating, the classification of failures.
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/payload.js';
import type { Outcome } from '../../src/delivery/contract.js';
import { fhirRig, fhirRow, fhirRows, SYSTEMS, type FhirRig } from './harness.js';

let r: FhirRig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});
const signal = new AbortController().signal;
const kinds = (outs: readonly Outcome[]): string[] => outs.map((o) => o.kind);
const etagOf = (o: Outcome | undefined): string | null => (o?.kind === 'delivered' ? (o.etag ?? null) : null);

async function only(key: string) {
  const found = await r!.server.byIdentifier(SYSTEMS.identifierSystem, key);
  expect(found, `Observations carrying ${key}`).toHaveLength(1);
  return found[0]!;
}

describe('FHIR sink: exactly once', () => {
  it('a batch becomes one Observation per row, each created by a conditional create, in one request', async () => {
    r = await fhirRig();
    const rows = fhirRows(5);
    const outs = await r.sink.deliver(rows, signal);
    expect(kinds(outs)).toEqual(Array(5).fill('delivered'));
    expect(r.sink.createMode()).toBe('conditional-create');
    for (const [i, row] of rows.entries()) {
      const obs = await only(row.dedupKey);
      expect(etagOf(outs[i])).toBe(`Observation/${obs.id}/_history/${obs.meta!.versionId}`);
    }
    expect(r.server.stats()).toMatchObject({ created: 5, batches: 1 });
  });

  it('a replay finds the same Observation and changes nothing', async () => {
    r = await fhirRig();
    const rows = fhirRows(3);
    const first = await r.sink.deliver(rows, signal);
    const again = await r.sink.deliver(rows, signal);
    expect(kinds(again)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(again.map(etagOf)).toEqual(first.map(etagOf));
    const census = await r.server.census();
    expect(census.observations).toBe(3);
    expect(Object.values(census.versions)).toEqual([1, 1, 1]);
  });

  it('a lost answer (applied, then the connection dropped) is one sink-wide failure; the resend finds the Observation', async () => {
    r = await fhirRig({ faults: { rateLost: 1 } });
    const rows = fhirRows(4);
    expect((await r.sink.deliver(rows, signal)).map((o) => o.kind === 'retry' && o.scope)).toEqual(['sink', 'record', 'record', 'record']);
    r.server.configure({ rateLost: 0 });
    const outs = await r.sink.deliver(rows, signal);
    expect(outs.map((o) => o.kind === 'delivered' && o.detail)).toEqual(Array(4).fill('already on the FHIR server with the same clinical content'));
    expect((await r.server.census()).observations).toBe(4);
    for (const row of rows) await only(row.dedupKey);
  });

  it('a correction is an update with If-Match on the version labgate saw: the version is bumped, nothing duplicated', async () => {
    r = await fhirRig();
    const [first] = await r.sink.deliver([fhirRow(1, 1)], signal);
    const fix = fhirRow(1, 1, { valueText: '4.9', value: 4.9, status: 'correction' }, etagOf(first));
    const [out] = await r.sink.deliver([fix], signal);
    expect(out).toMatchObject({ kind: 'delivered' });
    const obs = await only(fix.dedupKey);
    expect(obs).toMatchObject({ status: 'corrected', valueQuantity: { value: 4.9 } });
    expect(await r.server.history(obs.id!)).toHaveLength(2);
    expect(etagOf(out)).toBe(`Observation/${obs.id}/_history/${obs.meta!.versionId}`);
    // The correction's answer lost: the resend fails If-Match, reads the Observation and finds its own content.
    const [again] = await r.sink.deliver([fix], signal);
    expect(again).toMatchObject({ kind: 'delivered', detail: expect.stringMatching(/same clinical content/) });
    expect(await r.server.history(obs.id!)).toHaveLength(2);
  });

  it('somebody else changed the Observation: the correction is a conflict with their version, never written over', async () => {
    r = await fhirRig();
    const [first] = await r.sink.deliver([fhirRow(1, 1)], signal);
    const obs = await only(fhirRow(1, 1).dedupKey);
    await r.server.edit(obs.id!, (o) => ({ ...o, valueQuantity: { ...o.valueQuantity, value: 9.9 } }));
    const fix = fhirRow(1, 1, { valueText: '4.9', value: 4.9, status: 'correction' }, etagOf(first));
    const [out] = await r.sink.deliver([fix], signal);
    const now = await only(fix.dedupKey);
    expect(out).toMatchObject({ kind: 'conflict', etag: `Observation/${now.id}/_history/${now.meta!.versionId}` });
    expect(JSON.parse((out as { theirs: string }).theirs)).toMatchObject({ valueQuantity: { value: 9.9 } });
    expect(now.valueQuantity?.value).toBe(9.9);
    // A person forwards labgate's version: the row goes again with their version as If-Match and is applied.
    const [forwarded] = await r.sink.deliver([{ ...fix, etag: (out as { etag: string }).etag }], signal);
    expect(forwarded).toMatchObject({ kind: 'delivered' });
    expect((await only(fix.dedupKey)).valueQuantity?.value).toBe(4.9);
  });

  it('a first delivery that finds different content under its identifier is a conflict', async () => {
    r = await fhirRig();
    await r.sink.deliver([fhirRow(1, 1)], signal);
    const [out] = await r.sink.deliver([fhirRow(1, 1, { valueText: '7.0', value: 7 })], signal);
    expect(out).toMatchObject({ kind: 'conflict', reason: expect.stringMatching(/different clinical content/) });
    expect((await only(fhirRow(1, 1).dedupKey)).valueQuantity?.value).not.toBe(7);
  });

  it('the Observation labgate corrects was deleted on the server: a conflict', async () => {
    r = await fhirRig();
    const [first] = await r.sink.deliver([fhirRow(1, 1)], signal);
    const obs = await only(fhirRow(1, 1).dedupKey);
    await r.server.engine.repo.deleteResource('Observation', obs.id!);
    const [out] = await r.sink.deliver([fhirRow(1, 1, { status: 'correction' }, etagOf(first))], signal);
    expect(out).toMatchObject({ kind: 'conflict', reason: expect.stringMatching(/gone/) });
  });
});

describe('FHIR sink: one bad row', () => {
  it('an entry the server refuses is a dead letter with the diagnostics; the others are delivered', async () => {
    const rows = fhirRows(5);
    r = await fhirRig({ faults: { rejectIdentifiers: [rows[1]!.dedupKey, rows[3]!.dedupKey] } });
    const outs = await r.sink.deliver(rows, signal);
    expect(kinds(outs)).toEqual(['delivered', 'dead', 'delivered', 'dead', 'delivered']);
    expect(outs[1]).toMatchObject({ reason: expect.stringMatching(/^refused by the FHIR server: 422 invalid: this server refuses/) });
    expect((await r.server.census()).observations).toBe(3);
  });

  it('a server that refuses the whole batch for one entry: bisected until the bad row stands alone', async () => {
    const rows = fhirRows(7);
    r = await fhirRig({ faults: { rejectIdentifiers: [rows[4]!.dedupKey], rejectWholeBatch: true } });
    const outs = await r.sink.deliver(rows, signal);
    expect(kinds(outs)).toEqual(['delivered', 'delivered', 'delivered', 'delivered', 'dead', 'delivered', 'delivered']);
    expect(outs[4]).toMatchObject({ reason: expect.stringMatching(/^refused by the FHIR server: 422 invalid/) });
    expect((await r.server.census()).observations).toBe(6);
    // 7 → 4 + 3, 4 → 2 + 2, 2 → 1 + 1: the whole batch and six smaller ones.
    expect(r.server.stats().batches).toBe(7);
  });

  it('a payload corrupted at rest is dead without a request; a QC row with qc off is dead', async () => {
    r = await fhirRig();
    const [row] = fhirRows(1);
    const qc = fhirRow(2, 2, { qc: true });
    const outs = await r.sink.deliver(
      [{ ...row!, payload: row!.payload.replace('mmol/L', 'mmol/l') }, qc, { ...row!, payload: '{"x":1}', payloadSha256: sha256Hex('{"x":1}') }],
      signal,
    );
    expect(outs).toEqual([
      { kind: 'dead', reason: 'payload corrupted at rest' },
      { kind: 'dead', reason: expect.stringMatching(/quality-control/) },
      { kind: 'dead', reason: 'payload is not a result payload' },
    ]);
    expect(r.server.stats().batches).toBe(0);
  });

  it('QC results go, tagged, when the sink takes them', async () => {
    r = await fhirRig({}, { qc: true });
    const qc = fhirRow(1, 1, { qc: true });
    expect((await r.sink.deliver([qc], signal))[0]).toMatchObject({ kind: 'delivered' });
    expect((await only(qc.dedupKey)).meta?.tag).toEqual([expect.objectContaining({ code: 'qc' })]);
  });
});

describe('FHIR sink: update as create, where the server has no conditional create', () => {
  it('reads the record id, creates what is absent with PUT, and a replay changes nothing', async () => {
    r = await fhirRig({ conditionalCreate: false });
    const rows = fhirRows(3);
    expect(kinds(await r.sink.deliver(rows, signal))).toEqual(['delivered', 'delivered', 'delivered']);
    expect(r.sink.createMode()).toBe('update-as-create');
    for (const row of rows) expect((await only(row.dedupKey)).id).toBe(row.recordId);
    const again = await r.sink.deliver(rows, signal);
    expect(again.every((o) => o.kind === 'delivered' && o.detail?.includes('already'))).toBe(true);
    expect(Object.values((await r.server.census()).versions)).toEqual([1, 1, 1]);
  });

  it('a server that allows neither: a sink-wide retry that says why', async () => {
    r = await fhirRig({ conditionalCreate: false, updateCreate: false });
    const [out] = await r.sink.deliver(fhirRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'sink', reason: expect.stringMatching(/neither conditional create nor update as create/) });
  });

  it('the configuration overrides the CapabilityStatement', async () => {
    r = await fhirRig({}, { createMode: 'update-as-create' });
    const [row] = fhirRows(1);
    expect((await r.sink.deliver([row!], signal))[0]).toMatchObject({ kind: 'delivered' });
    expect((await only(row!.dedupKey)).id).toBe(row!.recordId);
  });
});

describe('FHIR sink: failures', () => {
  it('entries that fail while others are answered concern their records alone; a batch whose every entry fails is one failure', async () => {
    const { asOneExchange } = await import('../../src/sinks/fhir-classify.js');
    const sink = (reason: string): Outcome => ({ kind: 'retry', reason, scope: 'sink' });
    expect(asOneExchange<Outcome>([sink('a'), { kind: 'delivered' }, sink('b')]).map((o) => o.kind === 'retry' && o.scope)).toEqual([
      'record',
      false,
      'record',
    ]);
    expect(asOneExchange<Outcome>([sink('a'), sink('b'), { kind: 'retry', reason: 'c', scope: 'record' }]).map((o) => o.kind === 'retry' && o.scope)).toEqual([
      'sink',
      'record',
      'record',
    ]);
  });

  it.each([
    ['500', { rate500: 1 }, 'sink'],
    ['503', { rate503: 1 }, 'sink'],
    ['429', { rate429: 1 }, 'record'],
  ] as const)('%s: a retry (%s scope, once for the whole batch), nothing applied', async (status, faults, scope) => {
    r = await fhirRig({ faults: { ...faults, retryAfterSeconds: 7 } });
    const before = Date.now();
    const outs = await r.sink.deliver(fhirRows(2), signal);
    expect(outs.map((o) => o.kind === 'retry' && o.scope)).toEqual([scope, 'record']);
    // Retry-After is honored where it means something (429, 503).
    if (status !== '500') expect((outs[0] as { notBefore?: number }).notBefore).toBeGreaterThanOrEqual(before + 7000);
    expect((await r.server.census()).observations).toBe(0);
  });

  it('a hanging server times out: a sink-wide retry', async () => {
    r = await fhirRig({ faults: { rateHang: 1 } }, { timeouts: { connectMs: 500, headersMs: 150, bodyMs: 150 } });
    const [out] = await r.sink.deliver(fhirRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'sink', reason: expect.stringMatching(/timed out/) });
  });

  it('connection refused, also while reading the CapabilityStatement: a sink-wide retry', async () => {
    r = await fhirRig();
    await r.server.stop();
    const [out] = await r.sink.deliver(fhirRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'unreachable', reason: expect.stringMatching(/CapabilityStatement: FHIR server unreachable/) });
    await r.server.start();
    expect((await r.sink.deliver(fhirRows(1), signal))[0]).toMatchObject({ kind: 'delivered' });
  });

  it('rows of an aborted delivery are not sent', async () => {
    r = await fhirRig();
    const ac = new AbortController();
    ac.abort();
    const outs = await r.sink.deliver(fhirRows(3), ac.signal);
    expect(outs.every((o) => o.kind === 'retry')).toBe(true);
    expect(r.server.stats().batches).toBe(0);
  });
});
