import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { silentLog, type Log } from '../../src/log.js';
import { SystemdNotifier } from '../../src/systemd/notify.js';
import { ManualClock } from '../fixtures/manual-clock.js';

const quiet: Log = silentLog;

describe('SystemdNotifier', () => {
  it('is a no-op without NOTIFY_SOCKET', async () => {
    const calls: string[][] = [];
    const n = new SystemdNotifier({ env: { WATCHDOG_USEC: '30000000' }, pid: 42, log: quiet, exec: async (a) => void calls.push(a) });
    await n.ready();
    await n.stopping();
    expect(n.enabled).toBe(false);
    expect(n.watchdogMs).toBeUndefined();
    expect(n.startWatchdog(new ManualClock())).toBeTypeOf('function');
    expect(calls).toEqual([]);
  });

  it('sends READY, STATUS, STOPPING and the watchdog at half the interval', async () => {
    const calls: string[][] = [];
    const n = new SystemdNotifier({
      env: { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '20000000', WATCHDOG_PID: '42' },
      pid: 42,
      log: quiet,
      exec: async (a) => void calls.push(a),
    });
    expect(n.watchdogMs).toBe(20_000);
    await n.ready('3 instruments, 2 sinks');
    const clock = new ManualClock();
    const stop = n.startWatchdog(clock);
    await clock.advanceSettling(30_000);
    stop();
    await clock.advanceSettling(30_000);
    await n.stopping();
    expect(calls).toEqual([['READY=1', 'STATUS=3 instruments, 2 sinks'], ['WATCHDOG=1'], ['WATCHDOG=1'], ['WATCHDOG=1'], ['WATCHDOG=1'], ['STOPPING=1']]);
  });

  it('ignores a watchdog meant for another pid, and logs instead of throwing when the binary fails', async () => {
    const warnings: unknown[] = [];
    const n = new SystemdNotifier({
      env: { NOTIFY_SOCKET: '/nonexistent/notify', WATCHDOG_USEC: '20000000', WATCHDOG_PID: '7' },
      pid: 42,
      log: { ...quiet, warn: (o) => void warnings.push(o) },
      exec: async () => {
        throw new Error('spawn systemd-notify ENOENT');
      },
    });
    expect(n.watchdogMs).toBeUndefined();
    await expect(n.ready()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
  });

  it('reaches a real notify socket through the real systemd-notify binary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-notify-'));
    const socketPath = join(dir, 'notify');
    const sink = spawn('python3', [fileURLToPath(new URL('./fixtures/notify-sink.py', import.meta.url)), socketPath]);
    let out = '';
    sink.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until(() => out.includes('listening'));
      const n = new SystemdNotifier({ env: { NOTIFY_SOCKET: socketPath }, pid: process.pid, log: quiet });
      await n.ready('2 instruments');
      await n.watchdog();
      await n.stopping();
      await until(() => out.includes('STOPPING=1'));
      const lines = out
        .trim()
        .split('\n')
        .filter((l) => l !== 'BARRIER=1');
      expect(lines).toEqual(['listening', 'READY=1 STATUS=2 instruments', 'WATCHDOG=1', 'STOPPING=1']);
    } finally {
      sink.kill();
    }
  });
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
