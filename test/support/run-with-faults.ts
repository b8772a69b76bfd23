// `labgate run` with the faults the end-to-end suites inject, each off unless its variable is set: a test-only entry
// point (compiled to dist/test/support/, which a release pack leaves out), so the installed `labgate run` reads no
// fault variable and holds no code that blocks the event loop. The e2e harness starts it instead of bin/labgate.js
// when a test passes a LABGATE_FAULT_* variable:
//   node dist/test/support/run-with-faults.js run --config FILE
import { writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { runGateway, type RunHooks } from '../../src/commands/run.js';
import { systemClock } from '../../src/clock.js';
import { clockSyncProbe } from '../../src/clock-sync.js';
import type { StatFs } from '../../src/disk-guard.js';

/** The hooks the LABGATE_FAULT_* variables ask for. */
export function faultHooks(env: NodeJS.ProcessEnv): RunHooks {
  const statfs = faultStatfs(env['LABGATE_FAULT_STATFS_FILE']);
  const diskIntervalMs = positive(env['LABGATE_FAULT_DISK_INTERVAL_MS']);
  const retentionFirstRunMs = positive(env['LABGATE_FAULT_RETENTION_FIRST_RUN_MS']);
  const pauseMs = positive(env['LABGATE_FAULT_PAUSE_BEFORE_COMMIT_MS']);
  const rejectMs = positive(env['LABGATE_FAULT_UNHANDLED_REJECTION_MS']);
  // The power cut of a configuration save at its worst instant: the new text durable under its temporary name, not renamed.
  const killBeforeRename = env['LABGATE_FAULT_KILL_BEFORE_CONFIG_RENAME'] === '1';
  // A directory standing in for /run/systemd/timesync (the clock tests: synchronised once the flag file is there).
  const timesyncDir = env['LABGATE_FAULT_TIMESYNC_DIR'];
  const clockSync = timesyncDir ? clockSyncProbe({ timesyncDir, timedated: async () => undefined, monotonic: () => systemClock.monotonic() }) : undefined;
  return {
    deps: {
      ...(killBeforeRename ? { beforeConfigRename: () => void process.kill(process.pid, 'SIGKILL') } : {}),
      ...(statfs ? { statfs } : {}),
      ...(clockSync ? { clockSync } : {}),
      ...(diskIntervalMs ? { diskIntervalMs } : {}),
      ...(retentionFirstRunMs ? { retentionFirstRunMs } : {}),
      ...(pauseMs ? { beforeCommit: pauseBeforeCommit(pauseMs) } : {}),
    },
    // Leaves one promise rejection unhandled after start (the unhandled-rejection test).
    ...(rejectMs ? { afterReady: () => void setTimeout(() => void Promise.reject(new Error('labgate fault: an unhandled rejection')), rejectMs) } : {}),
  };
}

/** Free bytes read from a file stand in for the filesystem's (the full-disk test). */
function faultStatfs(file: string | undefined): StatFs | undefined {
  if (!file) return undefined;
  return async () => ({ bavail: Number((await readFile(file, 'utf8')).trim()), bsize: 1 });
}

/** Blocks the event loop between receipt and commit, announced on stderr first, so a test can kill the gateway there. */
function pauseBeforeCommit(ms: number): () => void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  return () => {
    writeSync(2, `labgate fault: pausing ${ms} ms before commit\n`);
    Atomics.wait(cell, 0, 0, ms);
  };
}

function positive(value: string | undefined): number | undefined {
  const n = Number(value);
  return value && Number.isFinite(n) && n > 0 ? n : undefined;
}

const [name, ...args] = process.argv.slice(2);
if (name !== 'run') {
  process.stderr.write('usage: node run-with-faults.js run --config FILE\n');
  process.exitCode = 2;
} else {
  const io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
  process.exitCode = await runGateway(args, io, faultHooks(process.env));
}
