// Upgrades and rollbacks with the service running: the real `labgate run` of each release under the fake service
// manager (fixtures/fake-systemd), which gives it NOTIFY_SOCKET and WATCHDOG_USEC and restarts it as Restart=always
// does. Which release runs is read from the process itself: the better-sqlite3 binary it has mapped.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MANIFEST_FILE, type Manifest } from '../../src/release/manifest.js';
import { migrations } from '../../src/store/migrations.js';
import { Root, atRunStart, beforeReady, extraMigration, packCheckout, scratchDir, variant, version } from './install-fixtures.js';

// Every test installs and starts real releases (each a 57 MB tree) and watches them for the shortened watchdog.
vi.setConfig({ testTimeout: 180_000 });

/** The store schema this checkout reads; the variants with an extra migration read one more. */
const schema = migrations.length;

let dir: string;
let v1: string;
let v1Name: string;
const roots: Root[] = [];

beforeAll(() => {
  dir = scratchDir('upgrade');
  const { tree } = packCheckout(dir);
  v1 = tree;
  const m = JSON.parse(readFileSync(join(tree, MANIFEST_FILE), 'utf8')) as Manifest;
  v1Name = `${m.version}-${m.commit}`;
}, 120_000);
afterEach(() => {
  for (const r of roots.splice(0)) r.cleanup();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }), 120_000);

/** A root running v1, started by the installer. */
function runningV1(): Root {
  const r = new Root(scratchDir('upgrade-root'));
  roots.push(r);
  const run = r.install('--source', v1, '--start');
  expect(run.status, run.stderr).toBe(0);
  expect(runningRelease(r)).toBe(v1Name);
  return r;
}

/** The release whose better-sqlite3 the service's main process has mapped. */
function runningRelease(r: Root): string | null {
  const pid = r.systemctl('show', '-P', 'MainPID', 'labgate.service');
  if (pid === '0' || !existsSync(`/proc/${pid}/maps`)) return null;
  const m = /\/opt\/labgate\/releases\/([^/]+)\/node_modules\/better-sqlite3\//.exec(readFileSync(`/proc/${pid}/maps`, 'utf8'));
  return m ? m[1]! : null;
}

function storeSchema(r: Root): number {
  const db = new Database(join(r.dataDir, 'labgate.db'), { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

describe('an upgrade with the service running', () => {
  it('smoke-tests, switches, restarts and watches; the new release runs, the old one is previous, config and store stay', () => {
    const r = runningV1();
    const config = readFileSync(join(r.root, 'etc/labgate/labgate.yaml'));
    const v2 = variant(v1, dir, 'v2good', version('0.2.0'));
    const run = r.install('--source', v2);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/smoke test of 0\.2\.0-v2good/);
    expect(run.stdout).toMatch(/READY=1; watching for 2s/);
    expect(r.link('current')).toBe('0.2.0-v2good');
    expect(r.link('previous')).toBe(v1Name);
    expect(runningRelease(r)).toBe('0.2.0-v2good');
    expect(r.service().active).toBe('active/running');
    expect(readFileSync(join(r.root, 'etc/labgate/labgate.yaml'))).toEqual(config);
    expect(storeSchema(r)).toBe(schema);
  });

  it('rolls back by itself when the new release fails at start: the previous runs again, exit 1 with the new log lines', () => {
    const r = runningV1();
    const broken = variant(v1, dir, 'v2nostart', version('0.2.0'), atRunStart("process.dlopen({ exports: {} }, '/nonexistent/simulated-addon.node');"));
    const run = r.install('--source', broken);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/0\.2\.0-v2nostart failed to start; its last log lines:/);
    expect(run.stderr).toMatch(/\| .*simulated-addon\.node: cannot open shared object file/);
    expect(run.stderr).toMatch(new RegExp(`rolled back: labgate.service runs ${v1Name} again`));
    expect(r.link('current')).toBe(v1Name);
    expect(r.link('previous')).toBe('0.2.0-v2nostart');
    expect(runningRelease(r)).toBe(v1Name);
  });

  it('rolls back when the new release reports READY=1 and then falls over within the watchdog interval', () => {
    const r = runningV1();
    // Timed from READY=1, not from the run's start: on a loaded machine the start alone takes longer than a second.
    const crashing = variant(v1, dir, 'v2crash', version('0.2.0'), beforeReady("setTimeout(() => process.kill(process.pid, 'SIGKILL'), 1000);"));
    const run = r.install('--source', crashing);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/READY=1; watching/);
    expect(run.stdout).toMatch(/did not stay up after READY=1/);
    expect(r.link('current')).toBe(v1Name);
    expect(runningRelease(r)).toBe(v1Name);
  });
});

describe('an upgrade of a service that keeps failing', () => {
  it('restarts and watches the new release, which may be the fix', () => {
    const r = new Root(scratchDir('upgrade-root'));
    roots.push(r);
    const looping = variant(v1, dir, 'loop', version('0.1.1'), atRunStart('process.exit(1);'));
    const first = r.install('--source', looping, '--start');
    expect(first.status).toBe(1);
    expect(first.stderr).toMatch(/no previous release to return to; 0\.1\.1-loop stays current/);
    expect(r.service().active).toMatch(/^activating\//);
    const fix = r.install('--source', variant(v1, dir, 'fix', version('0.1.2')));
    expect(fix.status, fix.stderr).toBe(0);
    expect(fix.stdout).toMatch(/READY=1; watching/);
    expect(runningRelease(r)).toBe('0.1.2-fix');
  });
});

describe('install.sh --rollback', () => {
  it('returns to the previous release and, run again, to the one after it', () => {
    const r = runningV1();
    expect(r.install('--source', variant(v1, dir, 'v2back', version('0.2.0'))).status).toBe(0);
    const back = r.install('--rollback');
    expect(back.status, back.stderr).toBe(0);
    expect(back.stdout).toMatch(new RegExp(`rolled back to ${v1Name} \\(0\\.2\\.0-v2back is now previous\\)`));
    expect([r.link('current'), r.link('previous'), runningRelease(r)]).toEqual([v1Name, '0.2.0-v2back', v1Name]);
    expect(r.install('--rollback').status).toBe(0);
    expect([r.link('current'), r.link('previous'), runningRelease(r)]).toEqual(['0.2.0-v2back', v1Name, '0.2.0-v2back']);
  });

  it('refuses when there is no previous release', () => {
    const r = runningV1();
    const run = r.install('--rollback');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/no previous release to roll back to/);
  });
});

describe('the store across versions', () => {
  it('a newer release migrates the store; rolling back across that migration is refused and the newer one keeps running', () => {
    const r = runningV1();
    const migrating = variant(v1, dir, 'v2mig', version('0.2.0'), extraMigration);
    const up = r.install('--source', migrating);
    expect(up.status, up.stderr).toBe(0);
    expect(up.stdout).toMatch(new RegExp(`labgate 0\\.2\\.0 will migrate the store in .* from schema ${schema} to ${schema + 1} when it starts`));
    expect(storeSchema(r)).toBe(schema + 1);
    const running = r.service().invocation;

    const back = r.install('--rollback');
    expect(back.status).toBe(1);
    expect(back.stderr).toMatch(
      new RegExp(
        `would refuse the store in .* \\(STORE_SCHEMA_NEWER\\): labgate\\.db has store schema ${schema + 1}, and this labgate reads schema ${schema} at most`,
      ),
    );
    expect(back.stderr).toMatch(new RegExp(`not rolled back: ${v1Name} fails its smoke test`));
    expect([r.link('current'), runningRelease(r), r.service().invocation]).toEqual(['0.2.0-v2mig', '0.2.0-v2mig', running]);
  });

  it('an older labgate refuses a store a newer one migrated, and leaves it as it was', () => {
    const r = runningV1();
    expect(r.install('--source', variant(v1, dir, 'v2mig2', version('0.2.0'), extraMigration)).status).toBe(0);
    r.systemctl('stop', 'labgate.service');
    const db = join(r.dataDir, 'labgate.db');
    const before = readFileSync(db);
    const old = spawnSync(
      process.execPath,
      [join(r.root, 'opt/labgate/releases', v1Name, 'bin/labgate.js'), 'run', '--config', join(r.root, 'etc/labgate/labgate.yaml')],
      {
        encoding: 'utf8',
      },
    );
    expect(old.status).toBe(1);
    expect(old.stderr).toMatch(
      new RegExp(
        `^labgate run: labgate\\.db has store schema ${schema + 1}, and this labgate reads schema ${schema} at most: a newer labgate has migrated it`,
        'm',
      ),
    );
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it('a release that migrates the store and then fails is not rolled back onto the migrated store', () => {
    const r = runningV1();
    const failing = variant(
      v1,
      dir,
      'v2migfail',
      version('0.2.0'),
      extraMigration,
      beforeReady("throw new Error('simulated failure after the store opened');"),
    );
    const run = r.install('--source', failing);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/0\.2\.0-v2migfail failed to start/);
    expect(run.stderr).toMatch(new RegExp(`cannot return to ${v1Name}: it fails its smoke test`));
    expect(storeSchema(r)).toBe(schema + 1);
    expect(r.link('current')).toBe('0.2.0-v2migfail');
  });
});
