// Whether the wall clock is synchronised, as systemd-timesyncd's files say or, without it, timedated (asked at most
// once a minute, and rested ten minutes when it does not answer).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clockSyncProbe } from '../src/clock-sync.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the clock synchronisation probe', () => {
  it('reads systemd-timesyncd first: running without its flag file is not synchronised, with it is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'timesync-'));
    dirs.push(dir);
    const timesync = join(dir, 'timesync');
    let asked = 0;
    const probe = clockSyncProbe({ timesyncDir: timesync, timedated: async () => (asked++, undefined), monotonic: () => 0 });
    expect((await probe()).state).toBe('unknown');
    mkdirSync(timesync);
    expect(await probe()).toEqual({ state: 'unsynchronised', source: 'systemd-timesyncd (no synchronisation since boot)' });
    writeFileSync(join(timesync, 'synchronized'), '');
    expect(await probe()).toEqual({ state: 'synchronised', source: 'systemd-timesyncd' });
    expect(asked).toBe(1);
  });

  it('without timesyncd asks timedated, at most once a minute, and rests ten minutes after silence', async () => {
    let now = 0;
    let answer: boolean | undefined = false;
    let asked = 0;
    const probe = clockSyncProbe({ timesyncDir: '/nonexistent/timesync', timedated: async () => (asked++, answer), monotonic: () => now });
    expect(await probe()).toEqual({ state: 'unsynchronised', source: 'timedated (NTPSynchronized)' });
    answer = true;
    now = 59_000;
    expect((await probe()).state).toBe('unsynchronised');
    now = 60_000;
    expect((await probe()).state).toBe('synchronised');
    answer = undefined;
    now = 120_000;
    expect((await probe()).state).toBe('unknown');
    now = 700_000;
    await probe();
    expect(asked).toBe(3);
    now = 720_000;
    await probe();
    expect(asked).toBe(4);
  });
});
