// labgate-release.json: what a packed tree is (version, commit, the store schema it reads) and what it is for (the
// platform, CPU and Node ABI of its native modules). Written by `install.sh --pack` from the files themselves;
// checked by the installer against the target's node and again against the files before anything is touched.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { misfits, surveyNative, type NativeEntry, type NativeSurvey, type Target } from './native.js';

/** The manifest's file name, at the root of a packed tree. */
export const MANIFEST_FILE = 'labgate-release.json';

/** A packed tree's manifest. */
export interface Manifest {
  name: 'labgate';
  version: string;
  commit: string;
  platform: string;
  arch: string;
  modules: number;
  /** The highest store schema (PRAGMA user_version) this release reads. */
  storeSchema: number;
  /** The node that packed it, for the record: a cross-pack differs from the target. */
  packedWith: Target & { node: string };
  native: NativeEntry[];
}

/** What a pack needs besides the tree. */
export interface PackFacts {
  version: string;
  commit: string;
  storeSchema: number;
  packer: Target & { node: string };
}

/** The manifest of the tree at `root`, its target read from its built native files (the packer's node decides the rest). */
export function buildManifest(root: string, facts: PackFacts): { kind: 'ok'; manifest: Manifest } | { kind: 'invalid'; problems: string[] } {
  const survey = surveyNative(root);
  const { packer } = facts;
  const target: Target = {
    platform: survey.decided.platform ?? packer.platform,
    arch: survey.decided.arch ?? packer.arch,
    modules: survey.decided.modules ?? packer.modules,
  };
  const problems = [...survey.problems, ...misfits(survey, target)];
  if (problems.length > 0) return { kind: 'invalid', problems };
  const { version, commit, storeSchema } = facts;
  return { kind: 'ok', manifest: { name: 'labgate', version, commit, ...target, storeSchema, packedWith: packer, native: survey.entries } };
}

/** `<version>-<commit>`: the release's directory under /opt/labgate/releases. */
export function releaseName(m: Pick<Manifest, 'version' | 'commit'>): string {
  return `${m.version}-${m.commit}`;
}

/** The tarball's file name, which says what the manifest says. */
export function packFileName(m: Manifest): string {
  return `labgate-${releaseName(m)}-${m.platform}-${m.arch}-abi${m.modules}.tar.gz`;
}

/** Writes the manifest into the tree. */
export function writeManifest(root: string, m: Manifest): void {
  writeFileSync(join(root, MANIFEST_FILE), JSON.stringify(m, null, 2) + '\n');
}

/** Reads and checks the shape of a tree's manifest; a tree without one was not made by `install.sh --pack`. */
export function readManifest(root: string): { kind: 'ok'; manifest: Manifest } | { kind: 'invalid'; problems: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(root, MANIFEST_FILE), 'utf8'));
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return { kind: 'invalid', problems: [missing ? `no ${MANIFEST_FILE}: not made by this installer's --pack` : `${MANIFEST_FILE} is not JSON`] };
  }
  const m = parsed as Record<string, unknown>;
  const text = ['version', 'commit', 'platform', 'arch'].filter((k) => typeof m[k] !== 'string' || !/^[A-Za-z0-9._+-]+$/.test(m[k] as string));
  const whole = ['modules', 'storeSchema'].filter((k) => !Number.isInteger(m[k]) || (m[k] as number) < 0);
  const bad = [...text, ...whole, ...(m['name'] === 'labgate' ? [] : ['name']), ...(Array.isArray(m['native']) ? [] : ['native'])];
  if (bad.length > 0) return { kind: 'invalid', problems: [`${MANIFEST_FILE}: missing or malformed ${bad.join(', ')}`] };
  return { kind: 'ok', manifest: parsed as Manifest };
}

/**
 * Why the tree at `root`, described by `m`, must not be installed for `target` (empty when it may): the manifest
 * names another node, or the files inside are not what the manifest says.
 */
export function refusals(root: string, m: Manifest, target: Target, survey: NativeSurvey = surveyNative(root)): string[] {
  const out: string[] = [];
  const packed = `${m.platform}-${m.arch}, Node ABI ${m.modules}`;
  const here = `${target.platform}-${target.arch}, Node ABI ${target.modules}`;
  if (m.platform !== target.platform || m.arch !== target.arch || m.modules !== target.modules) {
    out.push(`packed for ${packed}; this machine's node is ${here}`);
  }
  out.push(...survey.problems, ...misfits(survey, { platform: m.platform, arch: m.arch, modules: m.modules }).map((p) => `the manifest lies: ${p}`));
  return out;
}

/** How to make the tarball this machine needs. */
export function remedy(target: Target & { node: string }): string {
  return [
    `Make a tarball for ${target.platform}-${target.arch}, Node ABI ${target.modules} (node ${target.node}):`,
    '  on this machine: npm ci && systemd/install.sh --pack DIR   (in a checkout; needs the npm registry)',
    "  or elsewhere: the cross-pack in docs/install.md ('Packing elsewhere'); the installer checks what it made",
  ].join('\n');
}
