import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { censusGrowth, growingObjects, HeapSnapshot, type HeapSnapshotJson } from '../../bench/soak/heap-census.js';

// A real node process keeps a ledger that grows by 500 entries (in a Map and in an array) between two snapshots.
const LEDGER = `
import { writeHeapSnapshot } from 'node:v8';
class Entry { constructor(n) { this.n = n; } }
class Ledger { constructor() { this.entries = new Map(); this.list = []; } }
globalThis.ledger = new Ledger();
const add = (from, to) => { for (let i = from; i < to; i++) { ledger.entries.set(i, new Entry(i)); ledger.list.push(new Entry(i)); } };
add(0, 10);
writeHeapSnapshot(process.argv[1] + '/before.heapsnapshot');
add(10, 510);
writeHeapSnapshot(process.argv[1] + '/after.heapsnapshot');
`;

const dir = mkdtempSync(join(tmpdir(), 'heap-census-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the heap census of two snapshots of one process', () => {
  execFileSync(process.execPath, ['--input-type=module', '-e', LEDGER, dir]);
  const read = (name: string): HeapSnapshot => new HeapSnapshot(JSON.parse(readFileSync(join(dir, name), 'utf8')) as HeapSnapshotJson);
  const before = read('before.heapsnapshot');
  const after = read('after.heapsnapshot');

  it('counts the new objects by constructor', () => {
    const entries = censusGrowth(before.census(), after.census()).find((l) => l.kind === 'object Entry');
    expect(entries).toMatchObject({ count: 1020, countDelta: 1000 });
  });

  it('finds the collections that grew, and what holds them', () => {
    const grown = growingObjects(before, after, 100, 10);
    const map = grown.find((g) => g.kind === 'object Map');
    const list = grown.find((g) => g.kind === 'object Array');
    expect(map?.refsAfter).toBeGreaterThanOrEqual((map?.refsBefore ?? 0) + 500);
    expect(map?.heldBy.slice(0, 2)).toEqual(['entries ← object Ledger', 'ledger ← object global']);
    expect(list?.heldBy[0]).toBe('list ← object Ledger');
  });

  it('refuses a file that is not a heap snapshot', () => {
    expect(
      () =>
        new HeapSnapshot({ snapshot: { meta: { node_fields: [], node_types: [[]], edge_fields: [], edge_types: [[]] } }, nodes: [], edges: [], strings: [] }),
    ).toThrow(/not a V8 heap snapshot/);
  });
});
