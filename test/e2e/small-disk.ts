// A small real file system for the full-card tests: an ext4 image (4 KiB blocks, as on an SD card, no blocks kept
// for root) loop-mounted inside the test's scratch directory. Mounting needs root, which CI has: without it the test
// fails and says why, it never skips. The "operator's" filler file takes the space a test wants gone.
import { execFileSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** A mounted ext4 file system of `sizeMb`, at `path`; `unmount` undoes it (cleanups call it). */
export interface SmallDisk {
  path: string;
  /** Bytes an unprivileged writer may still use (statfs bavail, as the disk guard reads it). */
  free(): number;
  /** Writes `bytes` of zeros to `name` on the disk, fsynced, as an operator's file or another process's log. */
  fill(name: string, bytes: number): string;
  unmount(): void;
}

/** Makes and mounts the image in `dir`; throws with the reason when it cannot (not root, no loop device). */
export function mountSmallDisk(dir: string, sizeMb: number): SmallDisk {
  if (process.getuid?.() !== 0) throw new Error('the full-card test mounts a loop device and must run as root (CI does)');
  const image = join(dir, 'card.img');
  const path = join(dir, 'card');
  mkdirSync(path);
  const run = (cmd: string, args: string[]): void => {
    try {
      execFileSync(cmd, args, { stdio: 'pipe' });
    } catch (err) {
      const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
      throw new Error(`${cmd} ${args.join(' ')} failed: ${stderr || (err as Error).message}`);
    }
  };
  run('truncate', ['-s', `${sizeMb}M`, image]);
  run('mkfs.ext4', ['-q', '-F', '-b', '4096', '-m', '0', image]);
  run('mount', ['-o', 'loop', image, path]);
  let mounted = true;
  return {
    path,
    free: () => {
      const s = statfsSync(path);
      return s.bavail * s.bsize;
    },
    fill: (name, bytes) => {
      const file = join(path, name);
      const fd = openSync(file, 'w');
      try {
        const chunk = Buffer.alloc(1024 * 1024);
        for (let left = bytes; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      return file;
    },
    unmount: () => {
      if (!mounted) return;
      mounted = false;
      // Lazily: a gateway killed a moment ago may still hold a descriptor.
      run('umount', ['-l', path]);
      rmSync(image, { force: true });
    },
  };
}
