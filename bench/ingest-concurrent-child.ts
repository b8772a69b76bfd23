// One ingest.concurrent run in a process of its own, for the slow-disk figure: the parent starts it with LD_PRELOAD set
// to a shim that delays every fsync and fdatasync (SQLite's and labgate's alike). Prints one JSON line of figures.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../src/store/store.js';
import { committer, runWorkload, type CommitMode } from './ingest-concurrent-workload.js';

const [mode, dataDir, messagesEach] = process.argv.slice(2) as [CommitMode, string, string];
let clock = Date.UTC(2026, 6, 1);
const store = openStore({ dataDir, sinks: ['postgres', 'lims'], now: () => clock++ });
try {
  const figures = await runWorkload(store, committer(store, mode), 0, Number(messagesEach));
  process.stdout.write(JSON.stringify({ ...figures, fsyncMs: probeFsync(dataDir) }) + '\n');
} finally {
  store.close();
}

// What one fsync costs in this process: shows the shim is in effect.
function probeFsync(dir: string): number {
  const fd = openSync(join(dir, 'fsync-probe'), 'w');
  try {
    const start = performance.now();
    for (let i = 0; i < 20; i++) {
      writeSync(fd, Buffer.alloc(4096, i));
      fsyncSync(fd);
    }
    return (performance.now() - start) / 20;
  } finally {
    closeSync(fd);
  }
}
