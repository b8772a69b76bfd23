// systemd/install.sh into a throwaway root (DESTDIR, --no-system), from a minimal checkout so the test is fast;
// .ci/systemd-check.sh installs the real checkout with its production dependencies.
import { execFileSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const installer = join(repo, 'systemd/install.sh');

function fakeCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-checkout-'));
  for (const f of ['bin', 'config', 'systemd']) cpSync(join(repo, f), join(dir, f), { recursive: true });
  // No dependencies, so `npm prune --offline` has nothing to fetch.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'labgate', version: '0.0.0', type: 'module' }));
  const lock = { name: 'labgate', version: '0.0.0', lockfileVersion: 3, requires: true, packages: { '': { name: 'labgate', version: '0.0.0' } } };
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock));
  mkdirSync(join(dir, 'dist/src'), { recursive: true });
  writeFileSync(join(dir, 'dist/src/cli.js'), 'export async function main() { return 0; }\n');
  mkdirSync(join(dir, 'node_modules'));
  return dir;
}

function install(args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('bash', [installer, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Path, mode, type and content (or link target) of everything under root. */
function listing(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = lstatSync(path);
      const rel = relative(root, path);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out.push(`${rel} ${mode} -> ${readlinkSync(path)}`);
      else if (st.isDirectory()) {
        out.push(`${rel}/ ${mode}`);
        walk(path);
      } else out.push(`${rel} ${mode} ${readFileSync(path).toString('base64').slice(0, 64)}:${st.size}`);
    }
  };
  walk(root);
  return out;
}

describe('systemd/install.sh into a throwaway root', () => {
  it('installs the app, config, unit and udev rule; a second run is idempotent and keeps the config', () => {
    const source = fakeCheckout();
    const root = mkdtempSync(join(tmpdir(), 'labgate-root-'));
    install(['--source', source, '--no-system'], { DESTDIR: root });
    const first = listing(root);
    expect(first).toEqual(
      expect.arrayContaining([
        'etc/labgate/ 750',
        'etc/labgate/credentials/ 700',
        expect.stringMatching(/^etc\/labgate\/labgate\.yaml 640 /),
        expect.stringMatching(/^etc\/systemd\/system\/labgate\.service 644 /),
        expect.stringMatching(/^etc\/udev\/rules\.d\/99-labgate-serial\.rules 644 /),
        'usr/local/bin/labgate 777 -> /opt/labgate/bin/labgate.js',
        expect.stringMatching(/^opt\/labgate\/bin\/labgate\.js 755 /),
      ]),
    );
    expect(readFileSync(join(root, 'etc/labgate/labgate.yaml'), 'utf8')).toBe(readFileSync(join(repo, 'config/labgate.example.yaml'), 'utf8'));
    expect(readFileSync(join(root, 'etc/systemd/system/labgate.service'), 'utf8')).toBe(readFileSync(join(repo, 'systemd/labgate.service'), 'utf8'));

    appendFileSync(join(root, 'etc/labgate/labgate.yaml'), '# edited by the lab\n');
    const edited = listing(root);
    const out = install(['--source', source, '--destdir', root, '--no-system']);
    expect(out).toMatch(/kept the existing .*labgate\.yaml/);
    expect(listing(root)).toEqual(edited);
    expect(readdirSync(join(root, 'opt'))).toEqual(['labgate']);
  });

  it('installs the same tree from a packed tarball', () => {
    const source = fakeCheckout();
    const work = mkdtempSync(join(tmpdir(), 'labgate-pack-'));
    execFileSync('bash', [join(source, 'systemd/install.sh'), '--pack', join(work, 'labgate.tar.gz')]);
    const fromTarball = join(work, 'a');
    const fromCheckout = join(work, 'b');
    install(['--source', join(work, 'labgate.tar.gz'), '--destdir', fromTarball, '--no-system']);
    install(['--source', source, '--destdir', fromCheckout, '--no-system']);
    expect(listing(fromTarball)).toEqual(listing(fromCheckout));
  });

  it('refuses a system install without root or an unknown option, before touching anything', () => {
    expect(() => install(['--bogus'])).toThrow(/unknown option --bogus/);
    const root = mkdtempSync(join(tmpdir(), 'labgate-root-'));
    if (process.getuid?.() !== 0) expect(() => install(['--source', fakeCheckout(), '--destdir', root])).toThrow(/run as root/);
    expect(statSync(root).isDirectory()).toBe(true);
  });
});
