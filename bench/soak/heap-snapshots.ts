// The soak's `--heap-snapshots DIR`: the gateway runs with node's --heapsnapshot-signal, and a SIGUSR2 at the end of
// the warm-up, at the middle of what is measured and half a minute before the end writes a heap snapshot to DIR
// (bench/soak/heap-diff.ts compares two). A snapshot stops the gateway for some seconds and takes memory of its own
// while it is written, so a run that takes them is a diagnosis; its slopes are not the ceiling's figures.
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sleep, until, type GatewayChild } from '../../test/e2e/harness.js';
import type { Chore } from './schedule.js';

const SIGNAL = 'SIGUSR2';

/** node's options that make SIGUSR2 write a snapshot into `dir`. */
export function snapshotNodeArgs(dir: string): string[] {
  return [`--heapsnapshot-signal=${SIGNAL}`, `--diagnostic-dir=${dir}`];
}

/** The three snapshots' chores (minutes from the start), each waiting until its file is whole. */
export function snapshotChores(gateway: GatewayChild, dir: string, minutes: number, warmup: number): Chore[] {
  const at = [warmup, (warmup + minutes) / 2, minutes - 0.5];
  return at.map((minute) => ({ everyMs: Number.MAX_SAFE_INTEGER, atMs: minute * 60_000, run: () => takeSnapshot(gateway, dir) }));
}

async function takeSnapshot(gateway: GatewayChild, dir: string): Promise<void> {
  const before = new Set(snapshots(dir));
  gateway.signal(SIGNAL);
  let file: string | undefined;
  await until(
    async () => {
      file = snapshots(dir).find((f) => !before.has(f));
      return file !== undefined && (await whole(join(dir, file)));
    },
    5 * 60_000,
    'the heap snapshot to be written',
  );
}

function snapshots(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot'));
}

// Written in one go by the gateway's main thread: whole once its size stops changing and it ends its JSON.
async function whole(path: string): Promise<boolean> {
  const size = statSync(path).size;
  await sleep(2_000);
  if (size === 0 || statSync(path).size !== size) return false;
  const fd = openSync(path, 'r');
  try {
    const tail = Buffer.alloc(16);
    const n = readSync(fd, tail, 0, 16, Math.max(0, size - 16));
    return tail.subarray(0, n).toString('latin1').trimEnd().endsWith('}');
  } finally {
    closeSync(fd);
  }
}
