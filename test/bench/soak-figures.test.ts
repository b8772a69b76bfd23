import { describe, expect, it } from 'vitest';
import type { ExactlyOnce } from '../../bench/soak/exactly-once.js';
import { figures, warmupMinutes } from '../../bench/soak/figures.js';
import { anonSplit, type Sample } from '../../bench/soak/sampler.js';

const once: ExactlyOnce = { ok: true, acked: 10, stored: 10, pgRows: 10, limsRecords: 10, lost: 0, doubled: 0, unexplained: 0, notSent: 0 };

/** A process that climbs `settleMbPerHour` until `settledAtMinute`, then stays flat; a sample every 10 s. */
function settlingRun(minutes: number, settledAtMinute: number, settleMbPerHour: number): Sample[] {
  return Array.from({ length: minutes * 6 + 1 }, (_, i) => {
    const hours = i / 360;
    const rssMb = 150 + settleMbPerHour * Math.min(hours, settledAtMinute / 60);
    return {
      hours,
      rssMb,
      rssAnonMb: rssMb - 40,
      rssFileMb: 40,
      heapMb: 35,
      heapTotalMb: 70,
      externalMb: 2,
      fds: 53,
      anon: { brk: 20, arenas: 10, other: rssMb - 70 },
      spacesMb: { new: 16, old: 50 },
      walBytes: 4096,
      loopP99Ms: 110,
      loopMinMs: 100,
      steady: true,
    };
  });
}

describe('the soak figures', () => {
  it('the default warm-up is a tenth of an hour run', () => {
    expect(warmupMinutes(60)).toBe(6);
    expect(warmupMinutes(10)).toBe(2.5);
  });

  it('a process still settling after the default warm-up fails the RSS ceiling', () => {
    const rss = figures(settlingRun(60, 20, 20), 60, once, {}).find((l) => l.bench === 'soak.rss.slope')!;
    expect(rss.pass).toBe(false);
    expect(rss.value).toBeGreaterThan(1);
    expect(rss).not.toHaveProperty('settling');
  });

  it('a longer warm-up fits only what follows it, and shows the slope the default warm-up would have given', () => {
    const rss = figures(settlingRun(80, 20, 20), 80, once, {}, 20).find((l) => l.bench === 'soak.rss.slope')!;
    expect(Math.abs(rss.value)).toBeLessThan(1e-6);
    expect(rss.pass).toBe(true);
    expect(rss.warmupMinutes).toBe(20);
    expect(rss.samples).toBe(60 * 6 + 1);
    expect((rss.settling as { fromMinute: number; slope: number }).fromMinute).toBe(8);
    expect((rss.settling as { fromMinute: number; slope: number }).slope).toBeGreaterThan(1);
  });

  it('a leak climbs after any warm-up', () => {
    const leaking = settlingRun(80, 80, 2);
    const rss = figures(leaking, 80, once, {}, 20).find((l) => l.bench === 'soak.rss.slope')!;
    expect(rss.pass).toBe(false);
    // The fixture's growth is all outside malloc's arenas: the split says where.
    const split = rss.anonSlopes as { brk: number; arenas: number; other: number };
    expect(split.other).toBeCloseTo(2, 6);
    expect(split.brk).toBeCloseTo(0, 6);
    expect(split.arenas).toBeCloseTo(0, 6);
  });
});

describe('where the soak sees anonymous memory', () => {
  const mapping = (range: string, name: string, anonKb: number): string =>
    `${range} rw-p 00000000 00:00 0    ${name}\nRss: ${anonKb} kB\nAnonymous: ${anonKb} kB\n`;

  it('tells malloc main arena, a thread arena and the rest apart', () => {
    const smaps =
      mapping('55d1c0000000-55d1c0800000', '[heap]', 2048) +
      // A thread's arena: 64 MiB aligned, its committed part first.
      mapping('7f2c84000000-7f2c84900000', '', 9216) +
      `7f2c84900000-7f2c88000000 ---p 00000000 00:00 0\nRss: 0 kB\nAnonymous: 0 kB\n` +
      // V8's pages are 256 KiB aligned, not 64 MiB.
      mapping('2a3b00040000-2a3b00080000', '', 256) +
      mapping('7f2c90000000-7f2c90001000', '/usr/lib/x86_64-linux-gnu/libc.so.6', 4);
    expect(anonSplit(smaps)).toEqual({ brk: 2, arenas: 9, other: 0.25 + 4 / 1024 });
  });
});
