// The few file operations a durable save needs, as an interface: the real file system for the service, and in the tests
// a model of one that loses, at a power cut, every write not yet made durable (the data of a file not fsynced, a
// directory entry whose directory was not fsynced), which this machine cannot do for real.
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { readConfigFile } from './config-file.js';

/** What ConfigVersions does to files. */
export interface DurableFs {
  /** The file's text, or null when it does not exist. */
  read(path: string): Promise<string | null>;
  /** Creates or truncates `path`, writes `text` and fsyncs it (its directory entry is not durable yet). */
  writeSynced(path: string, text: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Makes the directory's entries (creations, renames, removals) durable. */
  syncDir(dir: string): Promise<void>;
  /** Names in a directory; none when it does not exist. */
  list(dir: string): Promise<string[]>;
  remove(path: string): Promise<void>;
  makeDir(dir: string): Promise<void>;
}

/** The real file system; files are created owner-only (the state directory is the service's own). */
export const nodeDurableFs: DurableFs = {
  // By the configuration files' own rule (config-file.ts): a regular file of at most 1 MiB, opened without blocking.
  read: async (path) => {
    const read = await readConfigFile(path);
    if (read.kind === 'text') return read.text;
    if (read.code === 'ENOENT') return null;
    throw Object.assign(new Error(`cannot read ${path}: ${read.detail}`), { code: read.code });
  },
  writeSynced: async (path, text) => {
    const handle = await open(path, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  rename: (from, to) => rename(from, to),
  syncDir: async (dir) => {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  list: async (dir) => {
    try {
      return await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  },
  remove: (path) => rm(path, { force: true }),
  makeDir: async (dir) => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  },
};
