// The breaker opens on evidence that the LIMS is down, not on one failed request: with the real delivery engine over
// a real store and the LIMS sink against the LIMS test server. One 503, lost answer or timeout among successes costs
// that record a retry (and is applied once); failures in a row, or a refused connection, pause the sink and it is
// probed at the LIMS's Retry-After when it gave one.
import { afterEach, describe, expect, it } from 'vitest';
import { drainRig, outboxStates, until, type DrainRig } from './drain-rig.js';

let rig: DrainRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const appliedOnce = (r: DrainRig): boolean => r.recordIds.every((id) => r.lims.server.appliedCount(id) === 1);

describe('one failure among successes', () => {
  it.each([
    // The 503 says Retry-After: 1, later than the row's own backoff (0.5 of 1 s): the row waits for it.
    { fate: '503' as const, retryInMs: 1_000 },
    // Applied, then the socket is destroyed, and the sink's immediate resend lost too: the record's later resend under
    // the same idempotency key is answered from the LIMS's memory.
    { fate: 'lost' as const, retryInMs: 500 },
    // Handled only after the sink's 200 ms header timeout has fired (undici checks it about every half second): the
    // resend, or the late original, is the only write.
    { fate: 'slow' as const, retryInMs: 500 },
  ])('$fate: the breaker stays closed, the sink keeps going, that record is delivered once', async ({ fate, retryInMs }) => {
    rig = await drainRig(60, { server: { faults: { slowMs: 2_000 } }, sink: { timeouts: { connectMs: 1_000, headersMs: 200, bodyMs: 1_000 } } });
    const r = rig;
    const victim = r.recordIds[7]!;
    r.lims.server.configure({ scripted: { [victim]: fate === 'lost' ? ['lost', 'lost'] : [fate] } });
    r.drain.start();
    await until(() => r.idle() && (outboxStates(r.store).sent ?? 0) === 59, 'every other record');
    expect(r.circuits.every((c) => c === 'closed')).toBe(true);
    expect(r.drain.status()).toMatchObject({ circuit: 'closed', delivered: 59 });
    expect(r.store.db.prepare(`SELECT next_attempt_at - ? FROM outbox WHERE state = 'pending'`).pluck().get(r.clock.now())).toBe(retryInMs);

    r.clock.advance(retryInMs);
    await until(() => r.idle() && outboxStates(r.store).sent === 60, 'the retried record');
    if (fate === 'slow') await new Promise((resolve) => setTimeout(resolve, 2_000)); // let the late original land too
    expect(r.circuits.every((c) => c === 'closed')).toBe(true);
    expect(outboxStates(r.store)).toEqual({ sent: 60, burned: 1 });
    expect(appliedOnce(r)).toBe(true);
    expect(r.lims.server.stats()).toMatchObject({ records: 60, applied: 60 });
  });
});

describe('evidence that the LIMS is down', () => {
  it('failureThreshold 503s in a row pause the sink, probed at the Retry-After the LIMS gave', async () => {
    rig = await drainRig(12, { server: { faults: { rate503: 1, retryAfterSeconds: 7 } }, policy: { batchSize: 3, inFlight: 1 } });
    const r = rig;
    const start = r.clock.now();
    r.drain.start();
    await until(() => r.idle() && r.drain.status().circuit === 'open', 'the breaker to open');
    // 3 + 3 failures: the fifth opened it; the first batch's rows wait for their own Retry-After, nothing is dead.
    expect(r.batches).toEqual([3, 3]);
    expect(r.circuits).toEqual(['closed', 'open']);
    expect(r.drain.status()).toMatchObject({ circuit: 'open', nextProbeAt: start + 7_000, pausedSince: start, deadLettered: 0 });
    expect(outboxStates(r.store)).toEqual({ pending: 12, burned: 3 });

    r.lims.server.configure({ rate503: 0 });
    r.clock.advance(6_999);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.batches).toEqual([3, 3]);
    r.clock.advance(1);
    await until(() => r.idle() && outboxStates(r.store).sent === 12, 'the probe and the backlog');
    expect(r.batches.slice(0, 3)).toEqual([3, 3, 1]);
    expect(r.drain.status().circuit).toBe('closed');
    expect(appliedOnce(r)).toBe(true);
  });

  it('lost answers in a row pause the sink until probeIntervalMs (no Retry-After); every write applied once', async () => {
    rig = await drainRig(30, { server: { faults: { rateLost: 1 } }, policy: { batchSize: 10, inFlight: 1 } });
    const r = rig;
    const start = r.clock.now();
    r.drain.start();
    await until(() => r.idle() && r.drain.status().circuit === 'open', 'the breaker to open');
    expect(r.batches).toEqual([10]);
    expect(r.drain.status()).toMatchObject({ nextProbeAt: start + 15_000, lastError: expect.stringContaining('response lost') as string });
    // The pause is the sink's: the rows keep their due time and attempts.
    expect(outboxStates(r.store)).toEqual({ pending: 30, burned: 0 });

    r.lims.server.configure({ rateLost: 0 });
    r.clock.advance(15_000);
    await until(() => r.idle() && outboxStates(r.store).sent === 30, 'the backlog');
    expect(appliedOnce(r)).toBe(true);
    // Each of the first batch's rows: its immediate resend, lost too, and its resend after the pause.
    expect(r.lims.server.stats().replays).toBe(20);
  });

  it('a refused connection pauses the sink at once, and it comes back at the next probe', async () => {
    // A threshold one batch cannot reach: only the refused connection itself can have opened the breaker.
    rig = await drainRig(20, { policy: { batchSize: 10, inFlight: 1, failureThreshold: 50 } });
    const r = rig;
    await r.lims.server.stop();
    r.drain.start();
    await until(() => r.idle() && r.drain.status().circuit === 'open', 'the breaker to open');
    expect(r.batches).toEqual([10]);
    expect(r.drain.status()).toMatchObject({ nextProbeAt: r.clock.now() + 15_000, lastError: expect.stringContaining('connect') as string });

    await r.lims.server.start();
    r.clock.advance(15_000);
    await until(() => r.idle() && outboxStates(r.store).sent === 20, 'the backlog');
    expect(outboxStates(r.store)).toEqual({ sent: 20, burned: 0 });
    expect(appliedOnce(r)).toBe(true);
  });
});
