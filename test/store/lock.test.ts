import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { kill9, spawnFixture, waitForLine } from './child.js';
import { message, result, scratch } from './store-fixtures.js';

let cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe('the data directory lock', () => {
  it('refuses a second gateway, naming the holder, and admits one once the holder is SIGKILLed', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const holder = spawnFixture('hold-lock.mjs', [s.dataDir]);
    cleanups.push(() => kill9(holder));
    await waitForLine(holder, 'locked');

    let refused: unknown;
    try {
      s.open();
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ code: 'DATA_DIR_LOCKED' });
    const text = (refused as Error).message;
    expect(text).toContain(`pid ${holder.pid}`);
    expect(text).toContain(hostname());
    expect(text).toMatch(/started \d{4}-\d{2}-\d{2}T/);

    // Operator commands read beside the running gateway.
    const reader = s.open({ lock: false });
    expect(reader.counts().results).toBe(0);
    reader.close();

    await kill9(holder);
    const restarted = s.open();
    expect(restarted.ingest(message([result(1)]))).toMatchObject({ inserted: 1 });
  });

  it('refuses a second store in the same process and admits the next after close', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const first = s.open();
    expect(() => s.open()).toThrow(expect.objectContaining({ code: 'DATA_DIR_LOCKED', message: expect.stringContaining(`pid ${process.pid}`) }));
    first.close();
    expect(() => s.open().close()).not.toThrow();
  });
});
