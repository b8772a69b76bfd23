import { describe, expect, it } from 'vitest';
import { silentLog, type Log } from '../../src/log.js';
import { FakeTransport } from '../../src/transport/fake.js';
import { PortSupervisor, reopenDelay, type PortStatus } from '../../src/transport/supervisor.js';
import type { Transport } from '../../src/transport/transport.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';

const quiet: Log = silentLog;
const policy = { baseMs: 1_000, capMs: 8_000, stableMs: 10_000 };

/** A fake device: present or missing; each successful open yields a fresh FakeTransport. */
class FakeDevice {
  present = false;
  opens = 0;
  failWith: Error | undefined;
  current: FakeTransport | undefined;
  async open(): Promise<Transport> {
    this.opens++;
    if (this.failWith) throw this.failWith;
    if (!this.present) throw Object.assign(new Error('No such file or directory, cannot open /dev/ttyUSB0'), {});
    this.current = new FakeTransport();
    return this.current;
  }
}

function supervise(device: FakeDevice, clock: ManualClock, instrument = 'chem1') {
  const received: string[] = [];
  const attached: Transport[] = [];
  let stops = 0;
  const statuses: PortStatus[] = [];
  const supervisor = new PortSupervisor({
    instrument,
    endpoint: '/dev/serial/by-id/usb-FTDI_A1-if00-port0',
    open: () => device.open(),
    attach: (t) => {
      attached.push(t);
      t.onData((d) => received.push(d.toString('latin1')));
      return { stop: async () => void stops++ };
    },
    clock,
    log: quiet,
    policy,
    onStatus: (s) => statuses.push(s),
  });
  return { supervisor, received, attached, statuses, stops: () => stops };
}

describe('reopenDelay', () => {
  it('doubles from base up to the cap, jitter within ±20%', () => {
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 4, 10].map((a) => reopenDelay(a, policy, mid))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
    expect(reopenDelay(0, policy, () => 0)).toBe(800);
    expect(reopenDelay(0, policy, () => 1)).toBe(1200);
    expect(reopenDelay(5, policy, () => 1)).toBe(8000);
  });
});

describe('PortSupervisor', () => {
  it('waits for a device missing at start and retries with bounded backoff', async () => {
    const clock = new ManualClock();
    const device = new FakeDevice();
    const { supervisor, attached } = supervise(device, clock);
    supervisor.start();
    await settle();
    expect(supervisor.snapshot()).toMatchObject({ state: 'waiting-for-device', failedOpens: 1 });
    expect(supervisor.snapshot().reason).toMatch(/device not available: No such file/);
    expect(supervisor.snapshot().nextAttemptAt).toBe(clock.now() + 1000);
    await clock.advanceSettling(1000 + 2000 + 4000 + 8000 + 8000);
    expect(device.opens).toBe(6);
    device.present = true;
    await clock.advanceSettling(8000);
    expect(device.opens).toBe(7);
    expect(attached).toHaveLength(1);
    expect(supervisor.snapshot()).toMatchObject({ state: 'connected', reconnects: 0, failedOpens: 6 });
    expect(supervisor.snapshot().reason).toBeUndefined();
    await supervisor.stop();
    expect(supervisor.snapshot().state).toBe('stopped');
    expect(clock.pending).toBe(0);
  });

  it('reconnects after an unplug, stops the old runner, and tracks the last byte time', async () => {
    const clock = new ManualClock();
    const device = new FakeDevice();
    device.present = true;
    const { supervisor, received, attached, stops } = supervise(device, clock);
    supervisor.start();
    await settle();
    await clock.advanceSettling(5_000);
    device.current?.emitData('\x05');
    expect(received).toEqual(['\x05']);
    expect(supervisor.snapshot().lastByteAt).toBe(clock.now());
    const byteAt = clock.now();

    device.present = false;
    device.current?.disconnect('device unplugged');
    await settle();
    expect(stops()).toBe(1);
    expect(supervisor.snapshot()).toMatchObject({ state: 'waiting-for-device', reason: 'device unplugged', lastByteAt: byteAt });
    await clock.advanceSettling(1_000);
    expect(supervisor.snapshot().reason).toMatch(/device not available/);
    device.present = true;
    await clock.advanceSettling(2_000);
    expect(attached).toHaveLength(2);
    expect(supervisor.snapshot()).toMatchObject({ state: 'connected', reconnects: 1 });
    device.current?.emitData('abc');
    expect(received).toEqual(['\x05', 'abc']);
    // The message's bytes were complete 40 ms before its commit reported it: the last message is when it was received.
    const receivedAt = clock.monotonic();
    await clock.advanceSettling(40);
    supervisor.recordEvent({ kind: 'message', summary: { captureId: 1, inserted: 2, absorbed: 0, conflicts: 0, rejected: 1 }, receivedAt });
    supervisor.recordEvent({ kind: 'nak', reason: 'checksum' });
    supervisor.recordEvent({ kind: 'checksum-error' });
    expect(supervisor.snapshot()).toMatchObject({
      lastMessageAt: clock.now() - 40,
      counters: { messages: 1, inserted: 2, rejected: 1, naks: 1, checksumErrors: 1, discarded: 0 },
    });
    await supervisor.stop();
    expect(stops()).toBe(2);
    expect(device.current?.isClosed).toBe(true);
  });

  it('reports a non-missing failure as error with its reason, and keeps retrying', async () => {
    const clock = new ManualClock();
    const device = new FakeDevice();
    device.failWith = Object.assign(new Error('Permission denied, cannot open /dev/ttyUSB0'), { code: 'EACCES' });
    const { supervisor } = supervise(device, clock);
    supervisor.start();
    await settle();
    expect(supervisor.snapshot()).toMatchObject({ state: 'error', reason: 'EACCES: Permission denied, cannot open /dev/ttyUSB0' });
    device.failWith = undefined;
    device.present = true;
    await clock.advanceSettling(1_000);
    expect(supervisor.snapshot().state).toBe('connected');
    await supervisor.stop();
  });

  it('a flapping link keeps backing off; a stable session resets the backoff', async () => {
    const clock = new ManualClock();
    const device = new FakeDevice();
    device.present = true;
    const { supervisor, statuses } = supervise(device, clock);
    supervisor.start();
    await settle();
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      device.current?.disconnect('peer closed');
      await settle();
      const s = statuses.at(-1) as PortStatus;
      delays.push((s.nextAttemptAt ?? 0) - clock.now());
      await clock.advanceSettling(s.nextAttemptAt! - clock.now());
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000]);
    await clock.advanceSettling(10_000);
    device.current?.disconnect('peer closed');
    await settle();
    expect((statuses.at(-1)?.nextAttemptAt ?? 0) - clock.now()).toBe(1000);
    await supervisor.stop();
  });

  it("one instrument's failure never affects another", async () => {
    const clock = new ManualClock();
    const good = new FakeDevice();
    good.present = true;
    const bad = new FakeDevice();
    bad.failWith = Object.assign(new Error('Input/output error'), { code: 'EIO' });
    const a = supervise(good, clock, 'chem1');
    const b = supervise(bad, clock, 'hema1');
    a.supervisor.start();
    b.supervisor.start();
    await settle();
    for (let i = 0; i < 20; i++) {
      good.current?.emitData(`msg${i}`);
      await clock.advanceSettling(3_000);
    }
    expect(a.received).toHaveLength(20);
    expect(a.supervisor.snapshot()).toMatchObject({ state: 'connected', reconnects: 0, failedOpens: 0 });
    expect(b.supervisor.snapshot()).toMatchObject({ state: 'error', reason: 'EIO: Input/output error' });
    expect(b.supervisor.snapshot().failedOpens).toBeGreaterThan(5);
    await Promise.all([a.supervisor.stop(), b.supervisor.stop()]);
  });

  it('a driver that throws on attach closes that session only and is retried', async () => {
    const clock = new ManualClock();
    const device = new FakeDevice();
    device.present = true;
    let attempts = 0;
    const supervisor = new PortSupervisor({
      instrument: 'x',
      endpoint: 'fake',
      open: () => device.open(),
      attach: () => {
        attempts++;
        if (attempts === 1) throw new Error('bug');
        return { stop: async () => {} };
      },
      clock,
      log: quiet,
      policy,
    });
    supervisor.start();
    await settle();
    expect(supervisor.snapshot().state).toBe('waiting-for-device');
    await clock.advanceSettling(1_000);
    expect(supervisor.snapshot().state).toBe('connected');
    await supervisor.stop();
  });
});

describe('PortSupervisor across a step of the wall clock', () => {
  for (const step of [-2 * 3_600_000, 365 * 86_400_000]) {
    it(`says "last message 10 s ago" and reopens on time after the clock stepped ${step < 0 ? 'back 2 h' : 'forward a year'}`, async () => {
      const clock = new ManualClock();
      const device = new FakeDevice();
      device.present = true;
      const { supervisor } = supervise(device, clock);
      supervisor.start();
      await settle();
      device.current?.emitData('\x05');
      supervisor.recordEvent({
        kind: 'message',
        summary: { captureId: 1, inserted: 1, absorbed: 0, conflicts: 0, rejected: 0 },
        receivedAt: clock.monotonic(),
      });
      await clock.advanceSettling(10_000);
      clock.step(step);
      const s = supervisor.snapshot();
      expect([clock.now() - s.lastMessageAt!, clock.now() - s.lastByteAt!, clock.now() - s.since]).toEqual([10_000, 10_000, 10_000]);
      device.present = false;
      device.current?.disconnect();
      await settle();
      // Unplugged: the next open is due in about a second, on the page and in fact.
      const next = supervisor.snapshot().nextAttemptAt! - clock.now();
      expect(next).toBeGreaterThan(0);
      expect(next).toBeLessThanOrEqual(1_200);
      const opens = device.opens;
      await clock.advanceSettling(1_200);
      expect(device.opens).toBe(opens + 1);
      await supervisor.stop();
    });
  }
});
