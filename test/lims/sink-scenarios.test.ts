// The scenarios issue 6 names, drained to the end against a misbehaving LIMS test server.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleResult, sampleRow, sampleRows } from '../../src/lims-server/sample-rows.js';
import { seededRandom } from '../../src/lims-server/server.js';
import type { Outcome } from '../../src/delivery/contract.js';
import { CLIENT_SECRET, drain, rig, type Rig } from './harness.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});
const signal = new AbortController().signal;
const kinds = (outs: Iterable<Outcome>): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const o of outs) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
  return counts;
};
const appliedOnce = (rig: Rig, ids: string[]): boolean => ids.every((id) => rig.server.appliedCount(id) === 1);

describe('LIMS sink scenarios', () => {
  it('tokens expiring in the middle of a long drain dead-letter nothing', async () => {
    // The server kills tokens after 0.15 s while advertising an hour: every refresh is forced by a 401.
    r = await rig({ faults: { tokenTtlSeconds: 0.15, advertisedExpiresIn: 3600, latencyMs: 2, jitterMs: 3 } });
    const rows = sampleRows(600);
    const { final, seen } = await drain(r.sink, rows, { batch: 32 });
    expect(kinds(final.values())).toEqual({ delivered: 600 });
    expect(seen.filter((o) => o.kind === 'dead')).toEqual([]);
    expect(r.server.stats().tokensIssued).toBeGreaterThan(2);
    expect(
      appliedOnce(
        r,
        rows.map((x) => x.recordId),
      ),
    ).toBe(true);
  });

  it('lost responses: every record applied exactly once', async () => {
    r = await rig({ faults: { rateLost: 0.3 }, random: seededRandom(42) });
    const rows = sampleRows(300);
    const { final, seen } = await drain(r.sink, rows);
    expect(kinds(final.values())).toEqual({ delivered: 300 });
    expect(seen.some((o) => o.kind === 'retry')).toBe(true);
    expect(r.server.stats().replays).toBeGreaterThan(0);
    expect(
      appliedOnce(
        r,
        rows.map((x) => x.recordId),
      ),
    ).toBe(true);
  });

  it('a seeded storm of 500/503/429/lost/latency: all delivered, none applied twice', async () => {
    r = await rig({
      faults: { rate500: 0.1, rate503: 0.1, rate429: 0.1, rateLost: 0.15, retryAfterSeconds: 0, latencyMs: 1, jitterMs: 4 },
      random: seededRandom(7),
    });
    const rows = sampleRows(400);
    const { final } = await drain(r.sink, rows);
    expect(kinds(final.values())).toEqual({ delivered: 400 });
    expect(
      appliedOnce(
        r,
        rows.map((x) => x.recordId),
      ),
    ).toBe(true);
  });

  it('an outage: only retries with scope sink, nothing dead; resumes after recovery', async () => {
    r = await rig({ faults: { latencyMs: 1 } });
    const rows = sampleRows(200);
    const during: Outcome[] = [];
    r.server.configure({ outage: true });
    for (let i = 0; i < 3; i++) during.push(...(await r.sink.deliver(rows.slice(0, 64), signal)));
    expect(during.length).toBe(192);
    expect(during.every((o) => o.kind === 'retry' && o.scope === 'sink')).toBe(true);
    r.server.configure({ outage: false });
    const { final } = await drain(r.sink, rows);
    expect(kinds(final.values())).toEqual({ delivered: 200 });
    expect(
      appliedOnce(
        r,
        rows.map((x) => x.recordId),
      ),
    ).toBe(true);
  });

  it('an outage starting mid-drain: retries only, then everything delivered once', async () => {
    r = await rig({ faults: { latencyMs: 2 } });
    const rows = sampleRows(300);
    const { final, seen } = await drain(r.sink, rows, {
      batch: 50,
      onRound: (n) => r!.server.configure({ outage: n === 0 }),
    });
    // Round 0 runs with the outage on; all retries are for the whole sink.
    expect(seen.filter((o) => o.kind === 'retry').every((o) => o.kind === 'retry' && o.scope === 'sink')).toBe(true);
    expect(kinds(final.values())).toEqual({ delivered: 300 });
  });

  it('a concurrent edit survives; labgate reports a conflict with both versions', async () => {
    r = await rig();
    const row = sampleRow(1, sampleResult(1));
    const [first] = await r.sink.deliver([row], signal);
    r.server.editRecord(row.recordId, (d) => ({ ...d, result: { ...(d.result as object), valueText: '5.0', value: 5, flags: ['edited'] } }));
    const fix = sampleRow(1, sampleResult(1, { valueText: '4.9', value: 4.9, status: 'correction' }), first!.kind === 'delivered' ? first!.etag! : null);
    const [out] = await r.sink.deliver([fix], signal);
    expect(out).toMatchObject({ kind: 'conflict', theirs: expect.stringContaining('"valueText":"5.0"') });
    expect(r.server.record(row.recordId)!.document).toMatchObject({ result: { valueText: '5.0', flags: ['edited'] } });
    expect(r.server.appliedCount(row.recordId)).toBe(1);
  });

  it('somebody else created the record first with other content: conflict, theirs kept', async () => {
    r = await rig();
    const row = sampleRow(1, sampleResult(1));
    expect(r.server.editRecord(row.recordId, () => ({ recordId: row.recordId, result: { ...sampleResult(1), valueText: '7.7', value: 7.7 } }))).toBe(false);
    const [out] = await r.sink.deliver([row], signal);
    expect(out).toMatchObject({ kind: 'conflict', theirs: expect.stringContaining('7.7') });
    expect(r.server.appliedCount(row.recordId)).toBe(0);
    expect(r.server.record(row.recordId)!.document).toMatchObject({ result: { valueText: '7.7' } });
  });

  it('a lost answer to a first write (If-None-Match: * then 412 on the resend): delivered, not a conflict', async () => {
    // The LIMS forgets idempotency keys, so the sink's immediate resend is not a replay: it meets the record it created.
    r = await rig({ faults: { rateLost: 1, replayIdempotent: false } });
    const row = sampleRow(1, sampleResult(1));
    const [out] = await r.sink.deliver([row], signal);
    expect(out).toEqual({ kind: 'delivered', etag: r.server.record(row.recordId)!.etag, detail: expect.stringMatching(/already in the LIMS/) });
    expect(r.server.appliedCount(row.recordId)).toBe(1);
    expect(r.server.stats().replays).toBe(0);
  });

  it('a static bearer token from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lims-static-'));
    writeFileSync(join(dir, 'token'), 'static-token-Qx7\n');
    r = await rig({ staticTokens: ['static-token-Qx7'] }, { auth: { kind: 'static', tokenFile: join(dir, 'token') } });
    const outs = await r.sink.deliver(sampleRows(3), signal);
    expect(kinds(outs)).toEqual({ delivered: 3 });
    expect(r.log.lines.join('\n')).not.toContain('static-token-Qx7');
  });

  it('keeps secrets and tokens out of log lines and outcomes', async () => {
    r = await rig({ faults: { tokenTtlSeconds: 0.05, advertisedExpiresIn: 3600, rate500: 0.2, rateLost: 0.2 }, random: seededRandom(3) });
    const rows = sampleRows(120);
    r.server.configure({ reject422: [rows[0]!.recordId] });
    const { seen } = await drain(r.sink, rows);
    r.server.configure({ tokenTtlSeconds: 0 });
    seen.push(...(await r.sink.deliver(sampleRows(4, 500), signal)));
    const text = r.log.lines.join('\n') + JSON.stringify(seen);
    expect(r.log.lines.length).toBeGreaterThan(0);
    expect(r.server.issuedTokens().length).toBeGreaterThan(1);
    for (const secret of [CLIENT_SECRET, ...r.server.issuedTokens()]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/Bearer |Basic /);
  });
});
