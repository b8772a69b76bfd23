import { describe, expect, it } from 'vitest';
import { DiskGuard, diskAccepting, resumeMargin, type DiskStatus } from '../../src/disk-guard.js';
import { silentLog, type Log } from '../../src/log.js';
import { ManualClock } from '../fixtures/manual-clock.js';

const MiB = 1024 * 1024;
const quiet: Log = silentLog;

describe('diskAccepting', () => {
  const floor = 200 * MiB;
  it.each([
    { free: 500 * MiB, was: true, expected: true },
    { free: 200 * MiB, was: true, expected: true },
    { free: 200 * MiB - 1, was: true, expected: false },
    { free: 200 * MiB, was: false, expected: false },
    { free: 219 * MiB, was: false, expected: false },
    { free: 220 * MiB, was: false, expected: true },
    { free: 0, was: true, expected: false },
  ])('free $free, accepting before: $was → $expected', ({ free, was, expected }) => {
    expect(diskAccepting(free, floor, was)).toBe(expected);
  });

  it('a floor of 0 disables the guard; the margin is at least 8 MiB', () => {
    expect(diskAccepting(0, 0, false)).toBe(true);
    expect(resumeMargin(10 * MiB)).toBe(8 * MiB);
    expect(resumeMargin(1000 * MiB)).toBe(100 * MiB);
  });
});

describe('DiskGuard', () => {
  it('stops accepting below the floor and resumes by itself', async () => {
    const clock = new ManualClock();
    let free = 1000 * MiB;
    const changes: DiskStatus[] = [];
    const guard = new DiskGuard({
      path: '/var/lib/labgate',
      floorBytes: 200 * MiB,
      clock,
      log: quiet,
      intervalMs: 5_000,
      statfs: async () => ({ bavail: free / 4096, bsize: 4096 }),
      onChange: (s) => changes.push(s),
    });
    await guard.start();
    expect(guard.accepting()).toBe(true);
    free = 150 * MiB;
    await clock.advanceSettling(5_000);
    expect(guard.accepting()).toBe(false);
    expect(guard.status().reason).toBe('150 MB free on /var/lib/labgate, below the floor of 200 MB');
    free = 210 * MiB;
    await clock.advanceSettling(5_000);
    expect(guard.accepting()).toBe(false);
    free = 300 * MiB;
    await clock.advanceSettling(5_000);
    expect(guard.accepting()).toBe(true);
    expect(changes.map((c) => c.accepting)).toEqual([false, true]);
    guard.stop();
    expect(clock.pending).toBe(0);
  });

  it('refuses when free space cannot be measured', async () => {
    const guard = new DiskGuard({
      path: '/gone',
      floorBytes: MiB,
      clock: new ManualClock(),
      log: quiet,
      statfs: async () => {
        throw new Error('ENOENT: no such file or directory');
      },
    });
    const status = await guard.check();
    expect(status.accepting).toBe(false);
    expect(status.reason).toMatch(/cannot measure free space on \/gone/);
  });

  it('measures a real filesystem with fs.statfs', async () => {
    const guard = new DiskGuard({ path: '/tmp', floorBytes: 1, clock: new ManualClock(), log: quiet });
    const status = await guard.check();
    expect(status.freeBytes).toBeGreaterThan(0);
    expect(status.accepting).toBe(true);
  });
});
