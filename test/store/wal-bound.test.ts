// What the store's files may still take of the disk without another commit: the WAL up to its bound, less as it
// grows, and the database file up to the pages the WAL holds for it, until a checkpoint has written them there.
import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKSTOP_CHECKPOINT_BYTES, growthAhead } from '../../src/store/wal-bound.js';
import { message, result, scratch } from './store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

describe('growthAhead', () => {
  it('is the WAL bound less what the WAL file holds, and the pages a checkpoint has still to write', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const store = s.open();
    const pageSize = store.db.pragma('page_size', { simple: true }) as number;
    // 16 MiB of WAL whatever the page size: 8,192 frames of the 2 KiB pages a new store has.
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_CHECKPOINT_BYTES / pageSize);
    expect(BACKSTOP_CHECKPOINT_BYTES / pageSize).toBe(8192);
    const bound = 32 + (BACKSTOP_CHECKPOINT_BYTES / pageSize + 256) * (pageSize + 24);
    const wal = (): number => statSync(`${store.db.name}-wal`).size;
    const unwritten = (): number => (store.db.pragma('page_count', { simple: true }) as number) * pageSize - statSync(store.db.name).size;
    expect(growthAhead(store.db)).toBe(bound - wal() + unwritten());
    for (let i = 0; i < 200; i++) store.ingest(message([result(i)], [], `H|\\^&\r${'x'.repeat(8_000)}\rL|1\r`));
    expect(wal()).toBeGreaterThan(1_000_000);
    expect(unwritten()).toBeGreaterThan(1_000_000);
    expect(growthAhead(store.db)).toBe(bound - wal() + unwritten());
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    expect([wal(), unwritten(), growthAhead(store.db)]).toEqual([0, 0, bound]);
  });
});
