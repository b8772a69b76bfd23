// One writer per data directory. The lock is an exclusive SQLite transaction on `labgate.lock`, held for the
// process lifetime: SQLite takes it with fcntl, and the kernel drops fcntl locks when the process dies, so a
// SIGKILLed or power-cut gateway never leaves a stale lock behind. `labgate.pid` only names the holder for the
// loser's message; it is advisory and never decides who holds the lock.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LabgateError } from '../errors.js';
import { makePrivateFile } from './private-files.js';

/** Who holds a data directory. */
export interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
}

/** A held data-directory lock; `release()` lets the next process in. */
export interface DataDirLock {
  readonly holder: LockHolder;
  release(): void;
}

/** Takes the data directory's writer lock or throws DATA_DIR_LOCKED naming the current holder. */
export function acquireDataDirLock(dataDir: string, now: () => number): DataDirLock {
  const path = join(dataDir, 'labgate.lock');
  makePrivateFile(path);
  const db = new Database(path, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if (isBusy(err)) throw new LabgateError('DATA_DIR_LOCKED', lockedMessage(dataDir), { cause: err });
    throw err;
  }
  const holder: LockHolder = { pid: process.pid, hostname: hostname(), startedAt: new Date(now()).toISOString() };
  writeHolder(dataDir, holder);
  let held = true;
  return {
    holder,
    release() {
      if (!held) return;
      held = false;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

/** The holder recorded in `labgate.pid`, or null when it is missing or unreadable. */
export function readHolder(dataDir: string): LockHolder | null {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, 'labgate.pid'), 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.hostname !== 'string' || typeof parsed.startedAt !== 'string') {
      return null;
    }
    return { pid: parsed.pid, hostname: parsed.hostname, startedAt: parsed.startedAt };
  } catch {
    return null;
  }
}

// Written via rename so a loser never reads half a file.
function writeHolder(dataDir: string, holder: LockHolder): void {
  const tmp = join(dataDir, `labgate.pid.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(holder) + '\n', { mode: 0o600 });
  renameSync(tmp, join(dataDir, 'labgate.pid'));
}

function lockedMessage(dataDir: string): string {
  const holder = readHolder(dataDir);
  const who = holder
    ? `pid ${holder.pid} on ${holder.hostname}, started ${holder.startedAt}`
    : 'another process (labgate.pid is missing; it is still starting)';
  return `data directory ${dataDir} is in use by ${who}; only one labgate may write to it`;
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}
