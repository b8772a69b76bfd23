// The installer's helper (systemd/install.sh runs it; operators do not): the composition root of the install-time
// checks, kept out of the `labgate` command list. It always works on the tree it belongs to, with the node that
// runs it, so `node <tree>/dist/src/release/main.js check` asks exactly "may this tree run on this node?".
//   manifest --commit C   write labgate-release.json into the tree; print the tarball's file name
//   check                 refuse (exit 3) a tree whose manifest or native files do not fit this node; print the release name
//   field NAME            print one manifest field
//   smoke --config FILE   load the native modules, check the live store's schema (exit 3 when the release must not run)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { migrations } from '../store/migrations.js';
import { buildManifest, packFileName, readManifest, refusals, releaseName, remedy, writeManifest, type Manifest } from './manifest.js';
import type { Target } from './native.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const here: Target & { node: string } = {
  platform: process.platform,
  arch: process.arch,
  modules: Number(process.versions.modules),
  node: process.versions.node,
};

type Io = { out: (line: string) => void; err: (line: string) => void };

async function main(argv: string[], io: Io): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { commit: { type: 'string' }, config: { type: 'string' } } });
  const [command, field] = positionals;
  if (command === 'manifest' && values.commit) return manifest(values.commit, io);
  const read = readManifest(root);
  if (read.kind === 'invalid') return refuse(io, read.problems);
  const m = read.manifest;
  if (command === 'check') {
    const why = refusals(root, m, here);
    if (why.length > 0) return refuse(io, why);
    io.out(releaseName(m));
    return 0;
  }
  if (command === 'field' && field && field in m) {
    io.out(String(m[field as keyof Manifest]));
    return 0;
  }
  if (command === 'smoke' && values.config) return smoke(m, values.config, io);
  io.err('usage: main.js manifest --commit C | check | field NAME | smoke --config FILE');
  return 2;
}

function manifest(commit: string, io: Io): number {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const built = buildManifest(root, { version: pkg.version, commit, storeSchema: migrations.length, packer: here });
  if (built.kind === 'invalid') return refuse(io, built.problems);
  const m = built.manifest;
  writeManifest(root, m);
  if (m.platform !== here.platform || m.arch !== here.arch || m.modules !== here.modules) {
    io.err(`cross-pack: for ${m.platform}-${m.arch}, Node ABI ${m.modules} (this machine: ${here.platform}-${here.arch}, Node ABI ${here.modules})`);
  }
  io.out(packFileName(m));
  return 0;
}

async function smoke(m: Manifest, configFile: string, io: Io): Promise<number> {
  // Loaded only now: the store module needs better-sqlite3, which `check` must never load.
  const { loadConfig } = await import('../config/load.js');
  const { smoke: run } = await import('./smoke.js');
  const report = run(root, m, here, loadConfig(configFile).gateway.dataDir);
  for (const line of report.loaded) io.out(`loaded ${line}`);
  for (const line of report.notes) io.out(line);
  return report.problems.length > 0 ? refuse(io, report.problems, false) : 0;
}

function refuse(io: Io, problems: readonly string[], withRemedy = true): number {
  for (const p of problems) io.err(`  ${p}`);
  if (withRemedy) io.err(remedy(here));
  return 3;
}

process.exitCode = await main(process.argv.slice(2), {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
}).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  return 3;
});
