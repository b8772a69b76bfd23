import { describe, expect, it } from 'vitest';
import type { Log } from '../../src/log.js';
import { LogSummary } from '../../src/log-summary.js';
import { ManualClock } from '../fixtures/manual-clock.js';

function capture(): { log: Log; lines: { level: string; obj: object; msg: string | undefined }[] } {
  const lines: { level: string; obj: object; msg: string | undefined }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void =>
      void lines.push({ level, obj, msg });
  return { log: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), fatal: at('fatal') }, lines };
}

describe('LogSummary', () => {
  it('logs the first of a kind at once and the rest of the interval as one line', () => {
    const clock = new ManualClock();
    const { log, lines } = capture();
    const summary = new LogSummary(log, clock, 10_000);
    for (let i = 0; i < 1000; i++) summary.warn({ reason: `nak ${i}` }, 'astm link');
    summary.error({ err: 'EPIPE' }, 'astm write failed');
    expect(lines).toEqual([
      { level: 'warn', obj: { reason: 'nak 0' }, msg: 'astm link' },
      { level: 'error', obj: { err: 'EPIPE' }, msg: 'astm write failed' },
    ]);
    clock.advance(10_000);
    expect(lines.slice(2)).toEqual([
      { level: 'warn', obj: { reason: 'nak 999', repeated: 999, intervalMs: 10_000 }, msg: 'astm link (repeated 999 more times)' },
    ]);
  });

  it('keeps summarizing a steady flood once per interval and logs at once again after a quiet interval', () => {
    const clock = new ManualClock();
    const { log, lines } = capture();
    const summary = new LogSummary(log, clock, 1_000);
    for (let second = 0; second < 5; second++) {
      for (let i = 0; i < 100; i++) summary.warn({}, 'refused');
      clock.advance(1_000);
    }
    expect(lines.map((l) => l.msg)).toEqual(['refused', 'refused (repeated 99 more times)', ...Array<string>(4).fill('refused (repeated 100 more times)')]);
    clock.advance(1_000);
    clock.advance(1_000);
    summary.warn({ again: true }, 'refused');
    expect(lines.at(-1)).toEqual({ level: 'warn', obj: { again: true }, msg: 'refused' });
  });

  it('passes info and debug through untouched, and flush writes what is pending', () => {
    const clock = new ManualClock();
    const { log, lines } = capture();
    const summary = new LogSummary(log, clock);
    for (let i = 0; i < 3; i++) summary.info({ i }, 'committed');
    summary.warn({}, 'w');
    summary.warn({}, 'w');
    summary.flush();
    expect(lines.map((l) => l.msg)).toEqual(['committed', 'committed', 'committed', 'w', 'w (repeated 1 more times)']);
    expect(clock.armed).toEqual([]);
  });
});
