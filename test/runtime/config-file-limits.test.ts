// A configuration file is read only when it is a regular file of at most MAX_CONFIG_BYTES: a FIFO, a directory or a
// 150 MB file in its place is refused at once by check-config, run and a reload alike, and a reload reads off the
// event loop. A writer child feeds each FIFO after a while, so code that waited on it would be seen waiting (and
// would not hang the suite); it is killed after each test.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONFIG_BYTES, readConfigFile, readConfigFileSync } from '../../src/config/config-file.js';
import { parseConfigText } from '../../src/config/load.js';
import { ConfigReloader } from '../../src/gateway/reload.js';
import { runCli } from '../fixtures/cli.js';

const valid = 'gateway: {id: gw1}\n';
const writers: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const w of writers.splice(0)) if (w.exitCode === null) w.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-config-file-'));
  dirs.push(dir);
  return dir;
}

/** A FIFO that a child process writes a valid configuration into after `afterMs`. */
function fifo(afterMs = 3_000): string {
  const path = join(scratch(), 'labgate.yaml');
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  writers.push(spawn('sh', ['-c', `sleep ${afterMs / 1000}; printf '${valid}' > '${path}'`], { stdio: 'ignore' }));
  return path;
}

/** A sparse file of 150 MB (spaces would parse as YAML; it is never read). */
function huge(): string {
  const path = join(scratch(), 'labgate.yaml');
  writeFileSync(path, valid);
  truncateSync(path, 150 * 1024 * 1024);
  return path;
}

function directory(): string {
  const path = join(scratch(), 'labgate.yaml');
  mkdirSync(path);
  return path;
}

/** The longest the event loop went without running a 10 ms timer while `work` ran. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  try {
    await work();
    await new Promise((r) => setTimeout(r, 30));
  } finally {
    clearInterval(tick);
  }
  return Math.max(longest, performance.now() - last);
}

const cases = [
  ['a FIFO', fifo, /not a regular file \(a FIFO\)/],
  ['a directory', directory, /not a regular file \(a directory\)/],
  ['a 150 MB file', huge, new RegExp(`157286400 bytes, over the ${MAX_CONFIG_BYTES}-byte limit`)],
] as const;

describe.each(cases)('a configuration that is %s', (_, make, reason) => {
  it('is refused by check-config and by run, exit 2, before reading it', async () => {
    for (const command of ['check-config', 'run']) {
      const r = await runCli([command, '--config', make()]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(reason);
    }
  });

  it('is refused by a reload, which never stalls the event loop', async () => {
    const good = parseConfigText(valid);
    if (good.kind !== 'ok') throw new Error('bad fixture');
    const errors: object[] = [];
    const reloader = new ConfigReloader({
      file: make(),
      current: () => good.config,
      apply: async () => undefined,
      now: () => 0,
      log: { info: () => undefined, warn: () => undefined, error: (obj: object) => void errors.push(obj) },
    });
    let outcome: Awaited<ReturnType<ConfigReloader['reload']>> | undefined;
    const stall = await longestStall(async () => (outcome = await reloader.reload()));
    expect(outcome?.outcome).toBe('refused');
    expect(outcome?.problems[0]?.message).toMatch(reason);
    expect(errors).toHaveLength(1);
    // Generous for a loaded machine, and far below the writer's 3 s that a read waiting on the FIFO would stall.
    expect(stall).toBeLessThan(1_000);
  });
});

describe('the configuration file reader', () => {
  it('reads a file of exactly the limit, and refuses one byte more, the same way in both of its forms', async () => {
    const dir = scratch();
    const at = join(dir, 'at.yaml');
    const over = join(dir, 'over.yaml');
    writeFileSync(at, valid + '#'.repeat(MAX_CONFIG_BYTES - valid.length));
    writeFileSync(over, valid + '#'.repeat(MAX_CONFIG_BYTES - valid.length + 1));
    for (const read of [readConfigFileSync, readConfigFile]) {
      expect(await read(at)).toMatchObject({ kind: 'text', text: expect.stringMatching(/^gateway: \{id: gw1\}\n#+$/) });
      expect(await read(over)).toMatchObject({ kind: 'unreadable', code: 'ECONFIGFILE' });
      expect(await read(join(dir, 'missing.yaml'))).toEqual({ kind: 'unreadable', code: 'ENOENT', detail: 'ENOENT' });
    }
  });
});
