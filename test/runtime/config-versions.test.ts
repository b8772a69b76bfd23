// Saving the instruments file: old or new after a power cut at any step (a model file system that loses what was not
// fsynced, and a real process SIGKILLed between the write and the rename), the replaced version kept and restorable,
// a save refused when the file changed since the change was made, the history bounded.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigVersions, versionOf } from '../../src/config/config-versions.js';
import { LossyFs, PowerCut } from './lossy-fs.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const OLD = 'instruments:\n  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/a}}\n';
const NEW =
  'instruments:\n  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/a}}\n  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}}\n';

describe('ConfigVersions on a file system that loses what was not made durable', () => {
  it('leaves the old or the new file after a power cut before any step of a save, never anything else, and keeps the old one restorable', async () => {
    const file = '/state/instruments.yaml';
    const probe = new LossyFs(['/state', '/state/config-history']);
    probe.seed(file, OLD);
    await new ConfigVersions({ file, now: () => 0, fs: probe }).save(NEW, versionOf(OLD));
    const steps = probe.operations;
    expect(steps).toBeGreaterThan(8);
    const seen = new Set<string>();
    for (let cut = 0; cut <= steps; cut++) {
      const fs = new LossyFs(['/state', '/state/config-history']);
      fs.seed(file, OLD);
      const versions = new ConfigVersions({ file, now: () => Date.parse('2026-07-01T12:00:00Z'), fs });
      fs.cutBefore = cut;
      const outcome = await versions.save(NEW, versionOf(OLD)).catch((err: unknown) => err);
      if (cut < steps) expect(outcome).toBeInstanceOf(PowerCut);
      fs.crash();
      const after = await versions.current();
      expect([OLD, NEW], `power cut before operation ${cut}`).toContain(after.text);
      seen.add(after.text === OLD ? 'old' : 'new');
      // Whenever the new file is in place, the old one can be restored from the history.
      if (after.text === NEW) expect(await versions.past(versionOf(OLD))).toBe(OLD);
      // And the next save works from whatever the cut left (a stale .saving included).
      expect(await versions.save(OLD, after.version)).toEqual({ kind: 'saved', version: versionOf(OLD) });
      fs.crash();
      expect((await versions.current()).text).toBe(OLD);
    }
    expect([...seen].sort()).toEqual(['new', 'old']);
  });

  it('refuses a save made from a version that is no longer the file, and says what the file is now', async () => {
    const fs = new LossyFs(['/state']);
    fs.seed('/state/instruments.yaml', NEW);
    const versions = new ConfigVersions({ file: '/state/instruments.yaml', now: () => 0, fs });
    expect(await versions.save('instruments: []\n', versionOf(OLD))).toEqual({ kind: 'changed', text: NEW, version: versionOf(NEW) });
    expect((await versions.current()).text).toBe(NEW);
  });

  it('keeps the last ten replaced versions, newest first, each once', async () => {
    const fs = new LossyFs(['/state']);
    let now = Date.parse('2026-07-01T12:00:00Z');
    const versions = new ConfigVersions({ file: '/state/instruments.yaml', now: () => now, fs });
    let version = versionOf(null);
    for (let n = 0; n < 14; n++) {
      now += 1000;
      const saved = await versions.save(`instruments: [] # ${n}\n`, version);
      if (saved.kind !== 'saved') throw new Error('not saved');
      version = saved.version;
    }
    const history = await versions.history();
    expect(history).toHaveLength(10);
    expect(history[0]).toEqual({ version: versionOf('instruments: [] # 12\n'), replacedAt: now });
    expect(await versions.past(history[9]!.version)).toBe('instruments: [] # 3\n');
    expect(await versions.past(versionOf('instruments: [] # 2\n'))).toBeNull();
  });
});

describe('ConfigVersions on the real file system', () => {
  const child = fileURLToPath(new URL('../../dist/test/support/config-save-child.js', import.meta.url));

  it('leaves the old file, fsynced history beside it, when the process is SIGKILLed between the write and the rename; then the new one saves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-config-save-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'instruments.yaml');
    writeFileSync(file, OLD);
    const killed = await new Promise<NodeJS.Signals | null>((resolve) => {
      const p = spawn(process.execPath, [child, file, NEW, versionOf(OLD), 'kill-before-rename'], { stdio: 'inherit' });
      p.once('exit', (_code, signal) => resolve(signal));
    });
    expect(killed).toBe('SIGKILL');
    expect(readFileSync(file, 'utf8')).toBe(OLD);
    expect(readFileSync(`${file}.saving`, 'utf8')).toBe(NEW);
    expect(readdirSync(join(dir, 'config-history'))).toEqual([expect.stringMatching(new RegExp(`^instruments\\.\\d{8}T\\d{9}Z\\.${versionOf(OLD)}\\.yaml$`))]);
    const versions = new ConfigVersions({ file, now: () => Date.now() });
    expect(await versions.save(NEW, versionOf(OLD))).toEqual({ kind: 'saved', version: versionOf(NEW) });
    expect(readFileSync(file, 'utf8')).toBe(NEW);
    expect(existsSync(`${file}.saving`)).toBe(false);
    expect(await versions.history()).toEqual([{ version: versionOf(OLD), replacedAt: expect.any(Number) }]);
  });
});
