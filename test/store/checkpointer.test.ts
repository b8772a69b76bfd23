// Checkpoints in a worker thread: what the store's commits wrote to the WAL is copied into labgate.db off the event
// loop, and a checkpointer that cannot open the database says so and leaves the store's own checkpoints to SQLite.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../src/store/checkpointer.js';
import { message, result, scratch } from './store-fixtures.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(check: () => boolean): Promise<void> {
  for (let spin = 0; !check(); spin++) {
    if (spin > 500) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('Checkpointer', () => {
  it('copies every committed frame of the WAL into the database, one checkpoint at a time', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const store = s.open();
    store.db.pragma('wal_autocheckpoint = 0');
    for (let n = 0; n < 50; n++) store.ingest(message([result(n)]));
    const checkpointer = new Checkpointer(join(s.dataDir, 'labgate.db'));
    cleanups.push(() => checkpointer.close());
    checkpointer.request();
    checkpointer.request();
    await until(() => checkpointer.completed === 2);
    // Nothing left for a checkpoint on the store's connection to copy: the worker did it all.
    const [row] = store.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    expect(row!.log).toBeGreaterThan(0);
    expect(row!.checkpointed).toBe(row!.log);
    expect(store.counts().results).toBe(50);
  });

  it('checkpoints once the WAL holds enough frames not yet in the database, not after every commit', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const store = s.open();
    store.db.pragma('wal_autocheckpoint = 0');
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const checkpointer = new Checkpointer(join(s.dataDir, 'labgate.db'), () => {}, 40);
    cleanups.push(() => checkpointer.close());
    store.ingest(message([result(0)]));
    checkpointer.requestWhenDue();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(checkpointer.completed, 'a few frames wait for more').toBe(0);
    for (let n = 1; n < 40; n++) store.ingest(message([result(n)]));
    checkpointer.requestWhenDue();
    await until(() => checkpointer.completed === 1);
    const [row] = store.db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    expect(row!.log).toBeGreaterThanOrEqual(40);
    expect(row!.checkpointed).toBe(row!.log);
  });

  it('reports a database it cannot open, and takes no more requests', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const errors: string[] = [];
    const checkpointer = new Checkpointer(join(s.dataDir, 'missing.db'), (reason) => errors.push(reason));
    cleanups.push(() => checkpointer.close());
    checkpointer.request();
    await until(() => errors.length > 0);
    expect(errors[0]).toMatch(/^checkpointer stopped: /);
    checkpointer.request();
    expect(checkpointer.completed).toBe(0);
  });
});
