// The data directory holds patient results and raw analyzer captures: it and every file in it are created readable
// by the gateway's user alone, whatever the umask of whoever starts labgate (the unit sets UMask=0077, a technician
// running `labgate status` from a shell usually has 022). SQLite gives a database's -wal, -shm and -journal files the
// mode of the database file itself, so creating that file owner-only covers them.
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Creates `dir` and any missing parents with mode 0700; an existing directory is left as the administrator set it. */
export function makePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  // The mode given to mkdir is masked by the umask: set it on every directory this call made.
  const top = resolve(first);
  for (let d = resolve(dir); ; d = dirname(d)) {
    chmodSync(d, 0o700);
    if (d === top || dirname(d) === d) break;
  }
}

/** Creates an empty file with mode 0600 when it does not exist yet (an empty file is a valid new SQLite database). */
export function makePrivateFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  closeSync(fd);
  chmodSync(path, 0o600);
}
