// systemd/install.sh into throwaway roots, with this checkout packed once (real dist/, production node_modules and
// native modules): what a pack records, what the installer places where, and every tarball it must refuse before
// touching anything. Upgrades with a running service are in install-upgrade.test.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readNativeFile } from '../../src/release/elf.js';
import { MANIFEST_FILE, type Manifest } from '../../src/release/manifest.js';
import { migrations } from '../../src/store/migrations.js';
import { Root, copyTree, installer, listing, packCheckout, replaceFile, repo, scratchDir, tarOf, variant, version } from './install-fixtures.js';

// Each test installs real releases (57 MB trees) and runs their node; slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const here = `${process.platform}-${process.arch}`;
const modules = Number(process.versions.modules);
const sqliteNode = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
// A real binary for another CPU: the serial port binding's arm64 build, shipped in its npm package.
const arm64Binary = join(repo, 'node_modules/@serialport/bindings-cpp/prebuilds/linux-arm64/@serialport+bindings-cpp.armv8.glibc.node');

let dir: string;
let tarball: string;
let tree: string;
let manifest: Manifest;
const roots: Root[] = [];

beforeAll(() => {
  dir = scratchDir('install');
  ({ tarball, tree } = packCheckout(dir));
  manifest = JSON.parse(readFileSync(join(tree, MANIFEST_FILE), 'utf8')) as Manifest;
}, 120_000);
afterAll(() => {
  for (const r of roots) r.cleanup();
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

function newRoot(): Root {
  const r = new Root(scratchDir('install-root'));
  roots.push(r);
  return r;
}

const release = (): string => `${manifest.version}-${manifest.commit}`;

describe('install.sh --pack', () => {
  it('names the tarball after a manifest read from the native files themselves', () => {
    expect(basename(tarball)).toBe(`labgate-${release()}-${here}-abi${modules}.tar.gz`);
    expect(manifest).toMatchObject({ name: 'labgate', platform: process.platform, arch: process.arch, modules, storeSchema: migrations.length });
    expect(manifest.commit).toMatch(/^([0-9a-f]{12}(-dirty)?|nogit)$/);
    const sqlite = manifest.native.find((n) => n.file === sqliteNode);
    expect(sqlite).toEqual({ file: sqliteNode, kind: 'built', platform: 'linux', arch: process.arch, abi: `node-${modules}` });
    expect(readNativeFile(readFileSync(join(tree, sqliteNode)))).toMatchObject({ kind: 'elf', arch: process.arch });
    // Production dependencies only, and better-sqlite3 without its 26 MB of sources and objects.
    expect(readdirSync(join(tree, 'node_modules'))).not.toContain('typescript');
    expect(readdirSync(join(tree, 'node_modules/better-sqlite3/build/Release'))).toEqual(['better_sqlite3.node']);
  });
});

describe('install.sh into a throwaway root', () => {
  it('places the release beside the others, links current to it, writes config, unit and udev rule; a second run changes nothing', () => {
    const r = newRoot();
    rmSync(join(r.root, 'etc/labgate/labgate.yaml'));
    const first = r.install('--source', tarball);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/loaded better-sqlite3 \(SQLite /);
    const files = listing(r.root);
    expect(files).toEqual(
      expect.arrayContaining([
        `opt/labgate/current 777 -> releases/${release()}`,
        `opt/labgate/releases/${release()}/ 755`,
        expect.stringMatching(new RegExp(`^opt/labgate/releases/${release()}/bin/labgate\\.js 755 `)),
        'etc/labgate/ 750',
        'etc/labgate/credentials/ 700',
        expect.stringMatching(/^etc\/labgate\/labgate\.yaml 640 /),
        expect.stringMatching(/^etc\/systemd\/system\/labgate\.service 644 /),
        expect.stringMatching(/^etc\/udev\/rules\.d\/99-labgate-serial\.rules 644 /),
        'usr/local/bin/labgate 777 -> /opt/labgate/current/bin/labgate.js',
      ]),
    );
    expect(readFileSync(join(r.root, 'etc/labgate/labgate.yaml'), 'utf8')).toBe(readFileSync(join(repo, 'config/labgate.example.yaml'), 'utf8'));
    const unit = readFileSync(join(r.root, 'etc/systemd/system/labgate.service'), 'utf8');
    expect(unit).toBe(readFileSync(join(repo, 'systemd/labgate.service'), 'utf8'));
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node( --[a-z-]+=\d+)* \/opt\/labgate\/current\/bin\/labgate\.js run /m);

    appendFileSync(join(r.root, 'etc/labgate/labgate.yaml'), '# edited by the lab\n');
    const edited = listing(r.root);
    const again = r.install('--source', tarball);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/kept the existing .*labgate\.yaml/);
    expect(again.stdout).toMatch(/already current; nothing to switch/);
    expect(listing(r.root)).toEqual(edited);
  });

  it('installs the same release from the checkout as from its tarball', () => {
    const a = newRoot();
    const b = newRoot();
    expect(a.install('--source', tarball).status).toBe(0);
    const fromCheckout = b.install('--source', repo);
    expect(fromCheckout.status, fromCheckout.stderr).toBe(0);
    expect(listing(join(b.root, 'opt/labgate/releases'))).toEqual(listing(join(a.root, 'opt/labgate/releases')));
  }, 60_000);
});

describe('install.sh keeps a few releases', () => {
  it('removes the oldest beyond --keep, never the current or the previous one; --list shows them', () => {
    const r = newRoot();
    const v2 = variant(tree, dir, 'keep2', version('0.2.0'));
    const v3 = variant(tree, dir, 'keep3', version('0.3.0'));
    for (const source of [tarball, v2, v3]) expect(r.install('--source', source, '--keep', '2').status).toBe(0);
    expect(readdirSync(join(r.root, 'opt/labgate/releases')).sort()).toEqual(['0.2.0-keep2', '0.3.0-keep3']);
    expect(r.install('--list').stdout).toBe('0.3.0-keep3 (current)\n0.2.0-keep2 (previous)\n');
  });

  it('takes over an install from before releases: its files become a release, kept as previous', () => {
    const r = newRoot();
    // What the single-tree installer left: the app itself in /opt/labgate, without a manifest.
    const flat = join(r.root, 'opt/labgate');
    mkdirSync(join(r.root, 'opt'));
    execFileSync('cp', ['-a', tree, flat]);
    rmSync(join(flat, MANIFEST_FILE));
    const run = r.install('--source', tarball);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`moved the single-tree install \\(${manifest.version}\\) to releases/${manifest.version}-flat`));
    expect([r.link('current'), r.link('previous')]).toEqual([release(), `${manifest.version}-flat`]);
    expect(readdirSync(flat).sort()).toEqual(['.install.lock', 'current', 'previous', 'releases']);
    // It has no smoke test, so nothing switches back to it by itself.
    const back = r.install('--rollback');
    expect(back.status).toBe(1);
    expect(back.stderr).toMatch(new RegExp(`not rolled back: ${manifest.version}-flat fails its smoke test`));
  });
});

describe('install.sh refuses, before touching anything', () => {
  let r: Root;
  beforeAll(() => {
    r = newRoot();
    expect(r.install('--source', tarball).status).toBe(0);
  }, 60_000);

  /** Offers `source` to the root where the good release is current: it must fail with `message` and change nothing. */
  function refused(source: string, message: RegExp): string {
    const before = listing(r.root, { times: true });
    const calls = readFileSync(join(r.dir, 'systemd/calls.log'), 'utf8');
    const run = r.install('--source', source);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/nothing was changed/);
    expect(listing(r.root, { times: true })).toEqual(before);
    expect(readFileSync(join(r.dir, 'systemd/calls.log'), 'utf8')).toBe(calls);
    return run.stderr;
  }

  it('a tarball packed for another CPU, and says how to make the right one', () => {
    const arm = variant(tree, dir, 'arm64pack', (t) => replaceFile(join(t, sqliteNode), readFileSync(arm64Binary)));
    const m = JSON.parse(readFileSync(join(arm, MANIFEST_FILE), 'utf8')) as Manifest;
    expect(m).toMatchObject({ platform: 'linux', arch: 'arm64' });
    const stderr = refused(
      tarOf(arm, join(dir, 'arm64.tar')),
      new RegExp(`packed for linux-arm64, Node ABI ${modules}; this machine's node is ${here}, Node ABI ${modules}`),
    );
    expect(stderr).toMatch(new RegExp(`Make a tarball for ${here}, Node ABI ${modules}`));
    expect(stderr).toMatch(/on this machine: npm ci && systemd\/install\.sh --pack DIR/);
  });

  it('a tarball packed for another Node ABI', () => {
    // The same binary relabelled for Node 24's ABI (137) the only way a linker would: its registration symbol.
    const other = variant(tree, dir, 'abi137', (t) => {
      const file = join(t, sqliteNode);
      const text = readFileSync(file).toString('latin1');
      replaceFile(file, Buffer.from(text.replace(`node_register_module_v${modules}\0`, 'node_register_module_v137\0'), 'latin1'));
    });
    expect(JSON.parse(readFileSync(join(other, MANIFEST_FILE), 'utf8'))).toMatchObject({ modules: 137 });
    refused(tarOf(other, join(dir, 'abi137.tar')), new RegExp(`packed for ${here}, Node ABI 137; this machine's node is ${here}, Node ABI ${modules}`));
  });

  it('a tarball whose manifest says this machine but whose native module is for another CPU', () => {
    const lying = copyTree(tree, dir, 'lying', (t) => replaceFile(join(t, sqliteNode), readFileSync(arm64Binary)));
    refused(tarOf(lying, join(dir, 'lying.tar')), new RegExp(`the manifest lies: ${sqliteNode} is a linux-arm64 binary, not ${here}`));
  });

  it('a tarball without a manifest (packed by an older installer) or that is no labgate at all', () => {
    const old = copyTree(tree, dir, 'old', (t) => rmSync(join(t, MANIFEST_FILE)));
    refused(tarOf(old, join(dir, 'old.tar')), /has no labgate-release\.json: it was packed by an older installer/);
    writeFileSync(join(dir, 'junk.tar.gz'), 'not a tarball');
    refused(join(dir, 'junk.tar.gz'), /cannot unpack/);
  });
});

describe('install.sh smoke-tests a release before switching to it', () => {
  it('keeps the current release when the new one has a native module this machine cannot load', () => {
    // A too-new glibc requirement: the binary a pack made on a newer distribution would carry.
    const newer = variant(tree, dir, 'newglibc', (t) => {
      const file = join(t, sqliteNode);
      replaceFile(file, Buffer.from(readFileSync(file).toString('latin1').replace('GLIBC_2.14\0', 'GLIBC_9.14\0'), 'latin1'));
    });
    const r = newRoot();
    expect(r.install('--source', tarball).status).toBe(0);
    const run = r.install('--source', newer);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/better_sqlite3\.node does not load: .*version `GLIBC_9\.14' not found/);
    expect(run.stderr).toMatch(/not switched to .*newglibc: it fails its smoke test/);
    expect(r.link('current')).toBe(release());
    expect(readdirSync(join(r.root, 'opt/labgate/releases'))).toEqual([release()]);
  });
});

describe('install.sh --pack of a checkout whose build is stale', () => {
  it('refuses: the pack would carry another commit than it says', () => {
    const checkout = scratchDir('stale');
    for (const d of ['dist/src/release', 'dist/bundle', 'node_modules', 'src']) mkdirSync(join(checkout, d), { recursive: true });
    writeFileSync(join(checkout, 'dist/src/release/main.js'), '');
    writeFileSync(join(checkout, 'dist/bundle/cli.js'), '');
    writeFileSync(join(checkout, 'src/cli.ts'), '');
    utimesSync(join(checkout, 'dist/bundle/cli.js'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const run = spawnSync('bash', [installer, '--pack', join(checkout, 'out'), '--source', checkout], { encoding: 'utf8' });
    rmSync(checkout, { recursive: true, force: true });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/dist is older than src\/cli\.ts: run 'npm run build' first/);
  });
});

describe('install.sh usage', () => {
  it('refuses an unknown option, a keep of less than two, and a system install without root', () => {
    const run = (...args: string[]): ReturnType<typeof spawnSync> => spawnSync('bash', [installer, ...args], { encoding: 'utf8' });
    expect(run('--bogus').stderr).toMatch(/unknown option --bogus/);
    expect(run('--keep', '1', '--list').stderr).toMatch(/--keep needs a number of at least 2/);
    if (process.getuid?.() !== 0) expect(run('--source', tarball).stderr).toMatch(/run as root/);
  });
});
