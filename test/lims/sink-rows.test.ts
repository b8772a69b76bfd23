// Every classification row, end to end: the real sink against the real LIMS test server on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import { sampleResult, sampleRow, sampleRows } from '../../src/lims-server/sample-rows.js';
import { sha256Hex } from '../../src/payload.js';
import { rig, type Rig } from './harness.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});
const signal = new AbortController().signal;

describe('LIMS sink, one row per classification', () => {
  it('2xx: delivered with the ETag; the first write is create-only', async () => {
    r = await rig();
    const [row] = sampleRows(1);
    const [out] = await r.sink.deliver([row!], signal);
    expect(out).toEqual({ kind: 'delivered', etag: r.server.record(row!.recordId)!.etag });
    expect(r.server.appliedCount(row!.recordId)).toBe(1);
  });

  it('a correction with the stored ETag is applied with If-Match', async () => {
    r = await rig();
    const [first] = await r.sink.deliver([sampleRow(1, sampleResult(1))], signal);
    const fix = sampleRow(1, sampleResult(1, { valueText: '4.9', value: 4.9, status: 'correction' }), first!.kind === 'delivered' ? first!.etag! : null);
    const [out] = await r.sink.deliver([fix], signal);
    expect(out).toMatchObject({ kind: 'delivered' });
    expect(r.server.record(fix.recordId)!.document).toMatchObject({ result: { valueText: '4.9' } });
    expect(r.server.appliedCount(fix.recordId)).toBe(2);
  });

  it.each([412, 409] as const)('%i on a stale ETag with our content already there: delivered with their ETag', async (staleStatus) => {
    r = await rig({ faults: { staleStatus, replayIdempotent: false } }); // no replay: the precondition decides
    const row = sampleRow(1, sampleResult(1));
    await r.sink.deliver([row], signal);
    const [out] = await r.sink.deliver([{ ...row, etag: '"stale"' }], signal);
    expect(out).toEqual({ kind: 'delivered', etag: r.server.record(row.recordId)!.etag, detail: expect.stringMatching(/already in the LIMS/) });
    expect(r.server.appliedCount(row.recordId)).toBe(1);
  });

  it('409 "idempotency key in processing": retried after a short delay, then applied once', async () => {
    r = await rig({ faults: { rateHang: 1 } }, { timeouts: { connectMs: 500, headersMs: 200, bodyMs: 200 } });
    const row = sampleRow(1, sampleResult(1));
    expect((await r.sink.deliver([row], signal))[0]).toMatchObject({ kind: 'retry', scope: 'sink' });
    r.server.configure({ rateHang: 0 });
    const before = Date.now();
    const [busy] = await r.sink.deliver([row], signal);
    expect(busy).toMatchObject({ kind: 'retry', scope: 'record' });
    expect(busy!.kind === 'retry' && busy!.notBefore).toBeGreaterThanOrEqual(before + 50);
    r.server.releaseHung();
    expect((await r.sink.deliver([row], signal))[0]).toMatchObject({ kind: 'delivered' });
    expect(r.server.appliedCount(row.recordId)).toBe(1);
  });

  it('401: one token refresh shared by the whole batch, then delivered at once', async () => {
    r = await rig();
    await r.sink.deliver(sampleRows(1), signal);
    r.server.revokeTokens();
    const outs = await r.sink.deliver(sampleRows(16, 10), signal);
    expect(outs.every((o) => o.kind === 'delivered')).toBe(true);
    expect(r.server.stats().tokensIssued).toBe(2);
  });

  it('401 again with a fresh token: retry for the whole sink, never dead', async () => {
    r = await rig({ faults: { tokenTtlSeconds: 0 } });
    const [out] = await r.sink.deliver(sampleRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'sink' });
  });

  it('429 honors Retry-After in seconds (this record only)', async () => {
    r = await rig({ faults: { rate429: 1, retryAfterSeconds: 7 } });
    const before = Date.now();
    const [out] = await r.sink.deliver(sampleRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'record' });
    const nb = out!.kind === 'retry' ? out!.notBefore! : 0;
    expect(nb).toBeGreaterThanOrEqual(before + 7000);
    expect(nb).toBeLessThan(Date.now() + 7001);
  });

  it('503 honors Retry-After as an HTTP date (whole sink)', async () => {
    r = await rig({ faults: { rate503: 1, retryAfterSeconds: 30, retryAfterAsDate: true } });
    const [out] = await r.sink.deliver(sampleRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'sink' });
    expect(out!.kind === 'retry' && out!.notBefore).toBeGreaterThan(Date.now() + 27_000);
  });

  it('500: retry for the whole sink', async () => {
    r = await rig({ faults: { rate500: 1 } });
    expect((await r.sink.deliver(sampleRows(1), signal))[0]).toMatchObject({ kind: 'retry', scope: 'sink' });
  });

  it('a hanging request times out: retry for the whole sink', async () => {
    r = await rig({ faults: { rateHang: 1 } }, { timeouts: { connectMs: 500, headersMs: 150, bodyMs: 150 } });
    const [out] = await r.sink.deliver(sampleRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'sink' });
    expect(out!.kind === 'retry' && out!.reason).toMatch(/timed out/);
  });

  it('connection refused: the LIMS is unreachable (the breaker opens at once)', async () => {
    r = await rig();
    await r.server.stop();
    const [out] = await r.sink.deliver(sampleRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'unreachable' });
    await r.server.start();
  });

  it('a lost response is sent again at once, on another connection: delivered by the replay, applied once', async () => {
    r = await rig();
    const [row] = sampleRows(1);
    r.server.configure({ scripted: { [row!.recordId]: ['lost'] } });
    expect((await r.sink.deliver([row!], signal))[0]).toMatchObject({ kind: 'delivered', detail: 'replayed by the LIMS' });
    expect(r.server.appliedCount(row!.recordId)).toBe(1);
    expect(r.server.stats().replays).toBe(1);
  });

  it('a lost response whose resend is lost too: retry for the whole sink; every resend a replay, applied once', async () => {
    r = await rig({ faults: { rateLost: 1 } });
    const [row] = sampleRows(1);
    expect((await r.sink.deliver([row!], signal))[0]).toMatchObject({ kind: 'retry', scope: 'sink', reason: expect.stringMatching(/lost/) });
    r.server.configure({ rateLost: 0 });
    expect((await r.sink.deliver([row!], signal))[0]).toMatchObject({ kind: 'delivered', detail: 'replayed by the LIMS' });
    expect(r.server.appliedCount(row!.recordId)).toBe(1);
    expect(r.server.stats().replays).toBe(2);
  });

  it.each([400, 403, 404, 410, 422])('%i: dead with the status and the start of the body', async (status) => {
    const [row] = sampleRows(1);
    r = await rig(status === 422 ? { faults: { reject422: [row!.recordId] } } : { faults: { forcedStatus: { [row!.recordId]: status } } });
    const [out] = await r.sink.deliver([row!], signal);
    expect(out).toMatchObject({ kind: 'dead', reason: expect.stringContaining(`${status} {"type":`) });
    expect(out!.kind === 'dead' && out!.reason.length).toBeLessThan(600);
    expect(r.server.appliedCount(row!.recordId)).toBe(0);
  });

  it('a payload corrupted at rest: dead, nothing sent (not even a token request)', async () => {
    r = await rig();
    const [row] = sampleRows(1);
    const [out] = await r.sink.deliver([{ ...row!, payload: row!.payload.replace('mmol/L', 'mmol/l') }], signal);
    expect(out).toEqual({ kind: 'dead', reason: 'payload corrupted at rest' });
    expect(r.server.stats()).toMatchObject({ records: 0, tokensIssued: 0 });
  });

  it('a payload whose digest matches but is no result payload: dead', async () => {
    r = await rig();
    const [row] = sampleRows(1);
    const [out] = await r.sink.deliver([{ ...row!, payload: '{"x":1}', payloadSha256: sha256Hex('{"x":1}') }], signal);
    expect(out).toEqual({ kind: 'dead', reason: 'payload is not a result payload' });
  });

  it('rows of an aborted delivery are not sent', async () => {
    r = await rig();
    const ac = new AbortController();
    ac.abort();
    const outs = await r.sink.deliver(sampleRows(3), ac.signal);
    expect(outs.every((o) => o.kind === 'retry' && o.scope === 'record')).toBe(true);
    expect(r.server.stats().tokensIssued).toBe(0);
  });

  it('returns one outcome per row, in order, for a mixed batch', async () => {
    const rows = sampleRows(5);
    r = await rig({ faults: { reject422: [rows[1]!.recordId, rows[3]!.recordId] } });
    const outs = await r.sink.deliver(rows, signal);
    expect(outs.map((o) => o.kind)).toEqual(['delivered', 'dead', 'delivered', 'dead', 'delivered']);
  });
});
