import { describe, expect, it } from 'vitest';
import { DiskGuard, REMEASURE_BYTES, commitCost, diskAccepting, resumeMargin, type DiskStatus } from '../../src/disk-guard.js';
import { silentLog, type Log } from '../../src/log.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';

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

  it('holds the floor before every commit: the charges since the last measurement count, without a statfs per message', async () => {
    const clock = new ManualClock();
    // The commits really take what they are charged: free space is what the file system would say.
    let free = 300 * MiB;
    let measured = 0;
    let answer: (() => void) | undefined;
    const guard = new DiskGuard({
      path: '/var/lib/labgate',
      floorBytes: 200 * MiB,
      clock,
      log: quiet,
      statfs: async () => {
        measured++;
        // The figure of the moment statfs is called, answered once the test lets it, as from libuv's thread pool.
        const bavail = free / 4096;
        await new Promise<void>((resolve) => (answer = resolve));
        return { bavail, bsize: 4096 };
      },
    });
    const checked = guard.check();
    await settle();
    answer!();
    await checked;
    const commit = (bytes: number): void => {
      guard.charge(bytes);
      free -= bytes;
    };
    // 7 MiB in 7,168 commits of 1 KiB: not one statfs.
    for (let i = 0; i < 7 * 1024; i++) commit(1024);
    expect([measured, guard.accepting()]).toEqual([1, true]);
    // 8 MiB charged: measured again in the background, and the verdict never paused.
    commit(MiB);
    await settle();
    expect([measured, guard.accepting()]).toEqual([2, true]);
    // Charges made while statfs runs are not in its figure: they stay charged against it.
    commit(10 * MiB);
    answer!();
    await settle();
    expect([guard.status().freeBytes, free]).toEqual([292 * MiB, 282 * MiB]);
    // Past the floor: the commit that crosses it makes the guard refuse at once, before statfs has answered.
    while (guard.accepting()) commit(MiB);
    expect([free, guard.status().accepting]).toEqual([199 * MiB, true]);
    await settle();
    answer!();
    await settle();
    expect(guard.status()).toMatchObject({ accepting: false, reason: '199 MB free on /var/lib/labgate, below the floor of 200 MB' });
    expect(guard.accepting()).toBe(false);
  });

  it('lets commits on again when a measurement finds the estimate was too dear', async () => {
    let measured = 0;
    const guard = new DiskGuard({
      path: '/d',
      floorBytes: 100 * MiB,
      clock: new ManualClock(),
      log: quiet,
      statfs: async () => ({ bavail: (++measured === 1 ? 101 : 150) * 256, bsize: 4096 }),
    });
    await guard.check();
    guard.charge(2 * MiB);
    expect(guard.accepting()).toBe(false);
    await guard.check();
    expect([measured, guard.accepting(), guard.status().freeBytes]).toEqual([2, true, 150 * MiB]);
  });

  it("counts what the store's write-ahead log may still take as taken, and says so", async () => {
    let reserved = 30 * MiB;
    const guard = new DiskGuard({
      path: '/d',
      floorBytes: 100 * MiB,
      clock: new ManualClock(),
      log: quiet,
      statfs: async () => ({ bavail: (120 * MiB) / 4096, bsize: 4096 }),
      reserved: () => reserved,
    });
    expect(await guard.check()).toMatchObject({
      accepting: false,
      freeBytes: 120 * MiB,
      reservedBytes: 30 * MiB,
      reason: "120 MB free on /d (30 MB of it kept for the store's write-ahead log and checkpoints), below the floor of 100 MB",
    });
    // The log has grown to its length (the free space it took is gone from statfs's figure alike): nothing is kept.
    reserved = 0;
    expect(await guard.check()).toMatchObject({ accepting: true, freeBytes: 120 * MiB });
    guard.charge(15 * MiB);
    expect(guard.accepting()).toBe(true);
    guard.charge(6 * MiB);
    expect(guard.accepting()).toBe(false);
  });

  it('charges a commit more than it takes: twice its raw bytes and 4 KiB per page-touching part', () => {
    expect(commitCost(100, 0)).toBe(4296);
    expect(commitCost(20_000, 0)).toBe(44_096);
    expect(commitCost(2_000, 20)).toBe(4_000 + 21 * 4096);
    expect(REMEASURE_BYTES).toBe(8 * MiB);
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
