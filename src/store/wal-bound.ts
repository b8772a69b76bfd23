// How far the write-ahead log may still grow. SQLite writes the WAL from its start again once a checkpoint has copied
// all of it, so the file stops growing at the length it reached before a checkpoint caught up: the checkpointer
// worker's 4 MiB when it keeps up (checkpointer.ts), the connection's own backstop of 16 MiB when it does not.
// Until then each commit appends whole pages: 500 messages of 16 kB with three results each took 27 MB of the disk,
// 11 MB of database and 16.5 MB of WAL. And the database file grows only when a checkpoint copies the WAL's pages
// into it. The disk guard counts both as taken before any commit is charged for them (disk-guard.ts).
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

/** WAL bytes after which the committing connection checkpoints itself, when the worker falls behind: four times
 * SQLite's default, as the checkpointer worker keeps the WAL far shorter. */
export const BACKSTOP_CHECKPOINT_BYTES = 16 * 2 ** 20;

/** `bytes` of WAL in frames of this database's pages: SQLite and the checkpointer count the WAL in frames. */
export function walFrames(db: Database.Database, bytes: number): number {
  return Math.round(bytes / (db.pragma('page_size', { simple: true }) as number));
}

// The commit that crosses the backstop is appended whole before its checkpoint runs: room for a large group.
const CROSSING_FRAMES = 256;
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/**
 * Bytes the files of `db` may still grow by without another commit: the WAL up to its bound, and the database file up
 * to the pages it has in the WAL (a checkpoint writes them there; until then the file is shorter than the database).
 */
export function growthAhead(db: Database.Database): number {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const longest = WAL_HEADER + (walFrames(db, BACKSTOP_CHECKPOINT_BYTES) + CROSSING_FRAMES) * (pageSize + FRAME_HEADER);
  return Math.max(0, longest - sizeOf(`${db.name}-wal`)) + Math.max(0, pages * pageSize - sizeOf(db.name));
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    // Not there yet (the WAL before the first write): all of it is still to come.
    return 0;
  }
}
