// The data directory and every file the store makes in it are owner-only whatever the umask: they hold patient
// results and raw captures, and a technician's shell (umask 022) may be the first to open the store.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { message, result } from './store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);

describe('the store on disk', () => {
  it('creates its directory (and missing parents) 0700 and every file 0600, under a umask of 000', () => {
    const root = mkdtempSync(join(tmpdir(), 'labgate-private-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const before = process.umask(0);
    cleanups.push(() => void process.umask(before));
    const dataDir = join(root, 'var', 'lib', 'labgate');
    const store = openStore({ dataDir, sinks: ['postgres'], now: () => Date.UTC(2026, 6, 1) });
    cleanups.push(() => store.close());
    store.ingest(message([result(1)]));

    for (const dir of [join(root, 'var'), join(root, 'var', 'lib'), dataDir]) expect(mode(dir), dir).toBe('700');
    const files = readdirSync(dataDir);
    expect(files).toEqual(expect.arrayContaining(['labgate.db', 'labgate.db-wal', 'labgate.db-shm', 'labgate.lock', 'labgate.pid']));
    for (const file of files) expect(mode(join(dataDir, file)), file).toBe('600');
  });
});
