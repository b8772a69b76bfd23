// Real releases for the installer tests: this checkout packed once by systemd/install.sh --pack, then variants of
// it (a newer version, one that migrates the store, one that fails at start) made by editing the compiled files
// and writing their manifest with the tree's own code, as --pack does. Throwaway roots are driven through the
// fake systemctl/journalctl (fixtures/fake-systemd): this container has no PID 1 systemd, and neither has CI.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = fileURLToPath(new URL('../..', import.meta.url));
export const installer = join(repo, 'systemd/install.sh');
const fakeSystemd = join(repo, 'test/runtime/fixtures/fake-systemd');

/** A scratch directory for the suite, removed by `removeScratch`. */
export function scratchDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `labgate-${prefix}-`));
}

/** Packs this checkout into `dir` and unpacks it beside; returns the tarball and the packed tree. */
export function packCheckout(dir: string): { tarball: string; tree: string } {
  execFileSync('bash', [installer, '--pack', join(dir, 'packs')], { stdio: 'pipe' });
  const [name] = readdirSync(join(dir, 'packs'));
  const tarball = join(dir, 'packs', name!);
  mkdirSync(join(dir, 'unpacked'));
  execFileSync('tar', ['-C', join(dir, 'unpacked'), '-xf', tarball]);
  return { tarball, tree: join(dir, 'unpacked/labgate') };
}

/** An edit to a copied tree, before its manifest is written. */
export type Edit = (tree: string) => void;

/**
 * A copy of `base` at `dir/<name>/labgate` with `edits` applied, its manifest left as it was. The copy is made of
 * hard links (57 MB a tree, many trees): an edit must replace a file with `replaceFile`, never write into it.
 */
export function copyTree(base: string, dir: string, name: string, ...edits: Edit[]): string {
  const tree = join(dir, name, 'labgate');
  mkdirSync(dirname(tree), { recursive: true });
  execFileSync('cp', ['-al', base, tree]);
  for (const edit of edits) edit(tree);
  return tree;
}

/** Replaces a file of a copied tree with new content, leaving the tree it was linked from alone. */
export function replaceFile(file: string, content: string | Buffer): void {
  rmSync(file);
  writeFileSync(file, content);
}

/** A copy of `base` with `edits` applied and its manifest written as --pack writes it, for commit `commit`. */
export function variant(base: string, dir: string, commit: string, ...edits: Edit[]): string {
  const tree = copyTree(base, dir, commit, ...edits);
  rmSync(join(tree, 'labgate-release.json'));
  execFileSync(process.execPath, [join(tree, 'dist/src/release/main.js'), 'manifest', '--commit', commit], { stdio: 'pipe' });
  return tree;
}

/** Sets the version in package.json (the manifest reads it from there). */
export const version =
  (v: string): Edit =>
  (tree) => {
    const file = join(tree, 'package.json');
    replaceFile(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), version: v }, null, 2));
  };

/**
 * The files of a tree that hold the compiled module `module` (a path under dist/): tsc's, which the installer's
 * checks import, and the file of the bundle that holds it (dist/bundle/modules.json), which `labgate run` runs.
 */
function compiledFiles(tree: string, module: string): string[] {
  const bundled = JSON.parse(readFileSync(join(tree, 'dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>;
  const holding = Object.keys(bundled).filter((file) => bundled[file]!.includes(module));
  if (holding.length !== 1) throw new Error(`${module} is in ${holding.length} files of the bundle; update the fixture`);
  return [join(tree, 'dist', module), join(tree, 'dist/bundle', holding[0]!)];
}

/** Appends a store migration: this release reads one schema more and migrates the store to it on open. */
export const extraMigration: Edit = (tree) => {
  for (const file of compiledFiles(tree, 'src/store/migrations.js')) {
    replaceFile(file, readFileSync(file, 'utf8') + "\nmigrations.push('CREATE TABLE added_by_upgrade (x INTEGER)');\n");
  }
};

/** Inserts `code` into the compiled `labgate run` before `anchor`, so the service fails where a real one would. */
const inRun =
  (anchor: string, code: string): Edit =>
  (tree) => {
    for (const file of compiledFiles(tree, 'src/commands/run.js')) {
      const text = readFileSync(file, 'utf8');
      // The bundler prints strings in double quotes.
      const found = [anchor, anchor.replaceAll("'", '"')].find((a) => text.includes(a));
      if (found === undefined) throw new Error(`${file} no longer has "${anchor}"; update the fixture`);
      replaceFile(file, text.replace(found, `${code}\n    ${found}`));
    }
  };

/** `code` runs at the start of `labgate run`, before the configuration is read. */
export const atRunStart = (code: string): Edit => inRun('const config = loadConfig(file);', code);

/** `code` runs after the gateway started (its store opened and migrated), before READY=1. */
export const beforeReady = (code: string): Edit => inRun("await notifier.ready('accepting results');", code);

/** The packed tree as a tarball (uncompressed: install.sh reads either). */
export function tarOf(tree: string, out: string): string {
  execFileSync('tar', ['-C', dirname(tree), '-cf', out, 'labgate']);
  return out;
}

/** What one installer run did. */
export interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** A throwaway root with its own service manager (the fake one), configuration and data directory. */
export class Root {
  readonly root: string;
  readonly dataDir: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(readonly dir: string) {
    this.root = join(dir, 'root');
    this.dataDir = join(dir, 'data');
    mkdirSync(join(this.root, 'etc/labgate'), { recursive: true });
    this.env = {
      ...process.env,
      PATH: `${fakeSystemd}:${process.env.PATH ?? ''}`,
      FAKE_SYSTEMD_ROOT: this.root,
      FAKE_SYSTEMD_STATE: join(dir, 'systemd'),
      // The unit's 120 s start timeout and 30 s watchdog, shortened so a failed start is seen in seconds.
      FAKE_SYSTEMD_TIMEOUT_START: '15',
      FAKE_SYSTEMD_WATCHDOG: '2',
      FAKE_SYSTEMD_RESTART_SEC: '0.5',
    };
    // A gateway with no instruments and no sinks still opens (and migrates) its store and reports READY=1.
    const config = { gateway: { id: 'gw-install', dataDir: this.dataDir, http: { host: '127.0.0.1', port: 0 }, diskFloorMb: 0 }, instruments: [], sinks: {} };
    writeFileSync(join(this.root, 'etc/labgate/labgate.yaml'), JSON.stringify(config, null, 2));
  }

  /** Runs install.sh on this root with the service managed (through the fake systemctl). */
  install(...args: string[]): Run {
    const r = spawnSync('bash', [installer, '--destdir', this.root, '--no-system', '--with-service', ...args], { env: this.env, encoding: 'utf8' });
    return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  /** The fake systemctl on this root. */
  systemctl(...args: string[]): string {
    return execFileSync(join(fakeSystemd, 'systemctl'), args, { env: this.env, encoding: 'utf8' }).trim();
  }

  /** The service's state as `systemctl show` gives it. */
  service(): { active: string; invocation: string; restarts: number } {
    const p = (name: string): string => this.systemctl('show', '-P', name, 'labgate.service');
    return { active: `${p('ActiveState')}/${p('SubState')}`, invocation: p('InvocationID'), restarts: Number(p('NRestarts')) };
  }

  /** The release a link under /opt/labgate names. */
  link(name: 'current' | 'previous'): string | null {
    const path = join(this.root, 'opt/labgate', name);
    return existsSync(path) ? readlinkSync(path).replace(/^releases\//, '') : null;
  }

  /** The journal of the service's invocation that runs now. */
  journal(): string {
    return execFileSync(join(fakeSystemd, 'journalctl'), ['-u', 'labgate.service'], { env: this.env, encoding: 'utf8' });
  }

  /** Stops the service and removes everything. */
  cleanup(): void {
    if (existsSync(join(this.dir, 'systemd'))) this.systemctl('stop', 'labgate.service');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Path, mode, type and content (or link target) of everything under root, with modification times if asked. */
export function listing(root: string, options: { times?: boolean } = {}): string[] {
  const time = (ms: number): string => (options.times ? ` ${ms}` : '');
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = lstatSync(path);
      const rel = relative(root, path);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out.push(`${rel} ${mode} -> ${readlinkSync(path)}`);
      else if (st.isDirectory()) {
        out.push(`${rel}/ ${mode}${time(st.mtimeMs)}`);
        walk(path);
      } else out.push(`${rel} ${mode} ${head(path)}:${st.size}${time(st.mtimeMs)}`);
    }
  };
  walk(root);
  return out;
}

function head(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(48);
    return buf.subarray(0, readSync(fd, buf, 0, 48, 0)).toString('base64');
  } finally {
    closeSync(fd);
  }
}
