// The native modules of an application tree and the one platform, CPU and Node ABI they fit, read from the files.
// Two kinds of `.node` file exist in node_modules:
//   built      anywhere but under prebuilds/ (e.g. better-sqlite3's build/Release): compiled or downloaded for one
//              machine and loaded wherever the tree runs, so each must fit the target;
//   prebuilt   prebuilds/<platform>-<arch>[+<arch>]/ (node-gyp-build, e.g. @serialport/bindings-cpp): one per platform,
//              chosen at load time, so the target's own must be there and fit, and the others do not matter.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { readNativeFile, type NativeAbi } from './elf.js';

/** The node a tree is for: `process.platform`, `process.arch`, `process.versions.modules`. */
export interface Target {
  platform: string;
  arch: string;
  modules: number;
}

/** One native module file as found, with what its bytes say. */
export interface NativeEntry {
  /** Path relative to the tree. */
  file: string;
  kind: 'built' | 'prebuilt';
  platform: string;
  arch: string;
  /** `node-<modules>`, `napi` or `unknown` (a file no node loads as a module, e.g. an SQLite extension). */
  abi: string;
}

/** The tree's native files and what they agree on; a platform, CPU or ABI is absent when no built file decides it. */
export interface NativeSurvey {
  entries: NativeEntry[];
  decided: Partial<Target>;
  problems: string[];
}

/** Every `.node` file under `root/node_modules`, with what its bytes say, and the target the built ones agree on. */
export function surveyNative(root: string): NativeSurvey {
  const entries: NativeEntry[] = [];
  const problems: string[] = [];
  for (const file of nodeFiles(join(root, 'node_modules'))) {
    const rel = relative(root, file).split(sep).join('/');
    const read = readNativeFile(readFileSync(file));
    if (read.kind === 'invalid') problems.push(`${rel}: ${read.reason}`);
    else {
      const kind = /\/prebuilds\/[^/]+\/[^/]+$/.test(rel) ? 'prebuilt' : 'built';
      const abi = read.kind === 'elf' ? abiName(read.abi) : 'unknown';
      entries.push({ file: rel, kind, platform: read.platform, arch: read.kind === 'elf' ? read.arch : 'unknown', abi });
    }
  }
  const built = entries.filter((e) => e.kind === 'built');
  const decided: Partial<Target> = {};
  const platforms = unique(built.map((e) => `${e.platform}-${e.arch}`));
  if (platforms.length > 1) problems.push(`built native modules are for different machines: ${describe(built, (e) => `${e.platform}-${e.arch}`)}`);
  else if (built[0]) Object.assign(decided, { platform: built[0].platform, arch: built[0].arch });
  const abis = unique(built.map((e) => e.abi).filter((a) => a.startsWith('node-')));
  if (abis.length > 1) problems.push(`built native modules are for different Node ABIs: ${describe(built, (e) => e.abi)}`);
  else if (abis[0]) decided.modules = Number(abis[0].slice('node-'.length));
  return { entries, decided, problems };
}

/** Why the tree's native files cannot run on `target` (empty when they all can). */
export function misfits(survey: NativeSurvey, target: Target): string[] {
  const out: string[] = [];
  const want = `${target.platform}-${target.arch}`;
  for (const e of survey.entries.filter((x) => x.kind === 'built')) {
    if (`${e.platform}-${e.arch}` !== want) out.push(`${e.file} is a ${e.platform}-${e.arch} binary, not ${want}`);
    else if (e.abi.startsWith('node-') && e.abi !== `node-${target.modules}`)
      out.push(`${e.file} is built for Node ABI ${e.abi.slice(5)}, not ${target.modules}`);
  }
  for (const [pkg, files] of prebuiltByPackage(survey.entries)) {
    if (hasBuilt(survey.entries, pkg)) continue; // node-gyp-build loads build/Release before any prebuild
    const own = files.filter((e) => isTargetPrebuild(e.file, target));
    const fit = own.filter((e) => `${e.platform}-${e.arch}` === want && (e.abi === 'napi' || e.abi === `node-${target.modules}`));
    if (fit.length === 0) out.push(`${pkg} has no prebuilt binary for ${want} (Node ABI ${target.modules}) that fits`);
    for (const e of own.filter((x) => !fit.includes(x))) out.push(`${e.file} is labelled ${want} but is a ${e.platform}-${e.arch} ${e.abi} binary`);
  }
  return out;
}

function nodeFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.node'))
    .map((n) => join(dir, n))
    .sort();
}

function abiName(abi: NativeAbi): string {
  return abi.kind === 'node' ? `node-${abi.modules}` : abi.kind;
}

// The package a file belongs to: the path up to its last node_modules/<name> or node_modules/@scope/<name>.
function packageOf(file: string): string {
  const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
  return m ? m[1]! : file;
}

function prebuiltByPackage(entries: readonly NativeEntry[]): Map<string, NativeEntry[]> {
  const map = new Map<string, NativeEntry[]>();
  for (const e of entries.filter((x) => x.kind === 'prebuilt')) {
    const pkg = packageOf(e.file);
    map.set(pkg, [...(map.get(pkg) ?? []), e]);
  }
  return map;
}

function hasBuilt(entries: readonly NativeEntry[], pkg: string): boolean {
  return entries.some((e) => e.kind === 'built' && e.file.startsWith(`${pkg}/build/`));
}

/**
 * True for a prebuilt file node-gyp-build would pick on `target`. Its directory names are
 * <platform>-<arch>[+<arch>...]; a file tagged musl is for Alpine, not for the glibc systems (Raspberry Pi OS,
 * Debian) labgate runs on.
 */
export function isTargetPrebuild(file: string, target: Target): boolean {
  const m = /\/prebuilds\/([^/-]+)-([^/]+)\/([^/]+)$/.exec(file);
  if (!m || m[1] !== target.platform || !m[2]!.split('+').includes(target.arch)) return false;
  return !m[3]!.split('.').includes('musl');
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function describe(entries: readonly NativeEntry[], key: (e: NativeEntry) => string): string {
  return entries.map((e) => `${e.file} (${key(e)})`).join(', ');
}
