// A model of a file system at a power cut, for the saves of config-versions.ts: a file's data is durable only once it
// was fsynced, a directory's entries (a file created, renamed or removed) only once the directory was fsynced; a crash
// takes back everything else. Each operation can be made the one the power is cut before (`cutBefore`), so a test can
// cut it at every step of a save. This machine has no device mapper (no dm-flakey) to do it with a real disk.
import { dirname, basename } from 'node:path';
import type { DurableFs } from '../../src/config/durable-fs.js';

interface Inode {
  data: string;
  durable: string;
}

/** Thrown by the operation the power was cut before. */
export class PowerCut extends Error {}

/** An in-memory file system that forgets what was not made durable when `crash()` is called. */
export class LossyFs implements DurableFs {
  private readonly dirs = new Map<string, { live: Map<string, Inode>; durable: Map<string, Inode> }>();
  /** Operations done so far. */
  operations = 0;
  /** The operation (0-based) the power is cut before; none by default. */
  cutBefore = Infinity;

  constructor(dirs: readonly string[]) {
    for (const d of dirs) this.dirs.set(d, { live: new Map(), durable: new Map() });
  }

  /** Puts a durable file in place (the state before the test). */
  seed(path: string, text: string): void {
    const inode = { data: text, durable: text };
    this.dir(path).live.set(basename(path), inode);
    this.dir(path).durable.set(basename(path), inode);
  }

  /** The power comes back: every directory as last fsynced, every file's data as last fsynced. */
  crash(): void {
    for (const d of this.dirs.values()) {
      d.live = new Map(d.durable);
      for (const inode of d.live.values()) inode.data = inode.durable;
    }
    this.cutBefore = Infinity;
  }

  read = async (path: string): Promise<string | null> => {
    this.step();
    return this.dirs.get(dirname(path))?.live.get(basename(path))?.data ?? null;
  };

  // Two operations: opening truncates (and a truncation may reach the disk before anything else), then the write and
  // its fsync. A cut between them leaves an empty file where the name was.
  writeSynced = async (path: string, text: string): Promise<void> => {
    this.step();
    const d = this.dir(path);
    const inode = d.live.get(basename(path)) ?? { data: '', durable: '' };
    d.live.set(basename(path), inode);
    inode.data = '';
    inode.durable = '';
    this.step();
    inode.data = text;
    inode.durable = text;
  };

  rename = async (from: string, to: string): Promise<void> => {
    this.step();
    const inode = this.dir(from).live.get(basename(from));
    if (!inode) throw Object.assign(new Error(`ENOENT: ${from}`), { code: 'ENOENT' });
    this.dir(from).live.delete(basename(from));
    this.dir(to).live.set(basename(to), inode);
  };

  syncDir = async (dir: string): Promise<void> => {
    this.step();
    const d = this.dirs.get(dir);
    if (d) d.durable = new Map(d.live);
  };

  list = async (dir: string): Promise<string[]> => {
    this.step();
    return [...(this.dirs.get(dir)?.live.keys() ?? [])];
  };

  remove = async (path: string): Promise<void> => {
    this.step();
    this.dirs.get(dirname(path))?.live.delete(basename(path));
  };

  // Directories are given up front and survive a cut (their own entries are not what the saves are about).
  makeDir = async (dir: string): Promise<void> => {
    this.step();
    if (!this.dirs.has(dir)) this.dirs.set(dir, { live: new Map(), durable: new Map() });
  };

  private step(): void {
    if (this.operations++ === this.cutBefore) throw new PowerCut(`power cut before operation ${this.cutBefore}`);
  }

  private dir(path: string): { live: Map<string, Inode>; durable: Map<string, Inode> } {
    const d = this.dirs.get(dirname(path));
    if (!d) throw Object.assign(new Error(`ENOENT: ${dirname(path)}`), { code: 'ENOENT' });
    return d;
  }
}
