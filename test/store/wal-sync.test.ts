// The group commit's fsync of the WAL: one descriptor kept for the store's life (one trip to the thread pool per
// group, not three), always the file SQLite writes, closed with the store.
import { readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WalSync } from '../../src/store/wal-sync.js';
import { message, result, scratch } from './store-fixtures.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** This process's descriptors open on `path`, each with the inode it holds. */
function descriptorsOn(path: string): { fd: string; ino: number }[] {
  const out: { fd: string; ino: number }[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) out.push({ fd, ino: statSync(`/proc/self/fd/${fd}`).ino });
    } catch {
      // closed meanwhile (readdir's own descriptor)
    }
  }
  return out;
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

describe('the WAL fsync of a group commit', () => {
  it('opens the WAL once and keeps it, beside SQLite, until the store closes', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const store = s.open();
    const wal = join(s.dataDir, 'labgate.db-wal');
    store.ingestGroup([message([result(1)])]);
    expect(descriptorsOn(wal)).toHaveLength(1);
    for (let n = 2; n < 8; n++) {
      store.ingestGroup([message([result(n)])]);
      await store.syncWal();
    }
    // SQLite's own descriptor and the one the syncs share: six syncs, one more descriptor.
    expect(descriptorsOn(wal)).toHaveLength(2);
    store.close();
    await tick();
    expect(descriptorsOn(wal)).toHaveLength(0);
  });

  it('still syncs the file SQLite writes after a checkpoint has truncated the WAL', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const store = s.open();
    const wal = join(s.dataDir, 'labgate.db-wal');
    store.ingestGroup([message([result(1)])]);
    await store.syncWal();
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(statSync(wal).size).toBe(0);
    store.ingestGroup([message([result(2)])]);
    await store.syncWal();
    const inode = statSync(wal).ino;
    const open = descriptorsOn(wal);
    expect(open).toHaveLength(2);
    for (const d of open) expect(d.ino).toBe(inode);
    store.close();
  });

  it('refuses before the WAL exists, syncs once it does, and refuses after close', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const path = join(s.dataDir, 'not-yet-wal');
    const sync = new WalSync(path);
    await expect(sync.sync()).rejects.toMatchObject({ code: 'ENOENT' });
    writeFileSync(path, 'frames');
    await sync.sync();
    expect(descriptorsOn(path)).toHaveLength(1);
    sync.close();
    await expect(sync.sync()).rejects.toThrow(/closed/);
    await tick();
    expect(descriptorsOn(path)).toHaveLength(0);
  });

  it('closes the descriptor only once the sync in flight has returned', async () => {
    const s = scratch();
    cleanups.push(() => s.cleanup());
    const path = join(s.dataDir, 'wal');
    writeFileSync(path, 'frames');
    const sync = new WalSync(path);
    await sync.sync();
    const inFlight = sync.sync();
    sync.close();
    await expect(inFlight).resolves.toBeUndefined();
    await tick();
    expect(descriptorsOn(path)).toHaveLength(0);
  });
});
