import { describe, expect, it } from 'vitest';
import type { ExactlyOnce } from '../../bench/soak/exactly-once.js';
import { figures, warmupMinutes } from '../../bench/soak/figures.js';
import type { Sample } from '../../bench/soak/sampler.js';

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
    expect(figures(leaking, 80, once, {}, 20).find((l) => l.bench === 'soak.rss.slope')!.pass).toBe(false);
  });
});
