// `node dist/bench/soak/heap-diff.js BEFORE.heapsnapshot AFTER.heapsnapshot [--top N]`: what grew between two heap
// snapshots of one process (the soak's `--heap-snapshots DIR` takes them), as JSON lines: the kinds of objects whose
// own bytes grew most (`heap.kind`), then the objects found in both whose references grew most (`heap.growing`),
// each with what holds it. Snapshots are taken after a full collection, so what is counted is alive.
import { readFileSync } from 'node:fs';
import { censusGrowth, growingObjects, HeapSnapshot, type HeapSnapshotJson } from './heap-census.js';

const files = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--top');
if (files.length !== 2) throw new Error('usage: heap-diff BEFORE.heapsnapshot AFTER.heapsnapshot [--top N]');
const topArg = process.argv.indexOf('--top');
const top = topArg > 0 ? Number(process.argv[topArg + 1]) : 25;
const read = (file: string): HeapSnapshot => new HeapSnapshot(JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshotJson);
const before = read(files[0]!);
const after = read(files[1]!);
const print = (line: object): void => void process.stdout.write(JSON.stringify(line) + '\n');
const total = (s: HeapSnapshot): number => s.census().reduce((sum, l) => sum + l.bytes, 0);
print({ heap: 'heap.total', bytesBefore: total(before), bytesAfter: total(after), objectsBefore: before.nodeCount, objectsAfter: after.nodeCount });
for (const line of censusGrowth(before.census(), after.census()).slice(0, top)) print({ heap: 'heap.kind', ...line });
for (const object of growingObjects(before, after, 10, top)) print({ heap: 'heap.growing', ...object });
