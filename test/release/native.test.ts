// What a pack's native files really are, read from real binaries: this checkout's better-sqlite3 build and the
// serial port binding's prebuilds for other machines (shipped in its npm package).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readNativeFile } from '../../src/release/elf.js';
import { MANIFEST_FILE, buildManifest, packFileName, readManifest, refusals, type PackFacts } from '../../src/release/manifest.js';
import { misfits, surveyNative, type Target } from '../../src/release/native.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const modules = Number(process.versions.modules);
const sqlite = join(repo, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
const prebuilds = join(repo, 'node_modules/@serialport/bindings-cpp/prebuilds');
const prebuilt = {
  arm64: join(prebuilds, 'linux-arm64/@serialport+bindings-cpp.armv8.glibc.node'),
  arm64musl: join(prebuilds, 'linux-arm64/@serialport+bindings-cpp.armv8.musl.node'),
  arm: join(prebuilds, 'linux-arm/@serialport+bindings-cpp.armv7.glibc.node'),
  x64: join(prebuilds, 'linux-x64/@serialport+bindings-cpp.glibc.node'),
  win32: join(prebuilds, 'win32-x64/@serialport+bindings-cpp.node'),
  darwin: join(prebuilds, 'darwin-x64+arm64/@serialport+bindings-cpp.node'),
};
const x64: Target = { platform: 'linux', arch: 'x64', modules };
const arm64: Target = { platform: 'linux', arch: 'arm64', modules };

describe('readNativeFile', () => {
  it('reads the CPU and the Node ABI of real 64- and 32-bit ELF files', () => {
    expect(readNativeFile(readFileSync(sqlite))).toEqual({ kind: 'elf', platform: 'linux', arch: process.arch, abi: { kind: 'node', modules } });
    expect(readNativeFile(readFileSync(prebuilt.arm64))).toEqual({ kind: 'elf', platform: 'linux', arch: 'arm64', abi: { kind: 'napi' } });
    expect(readNativeFile(readFileSync(prebuilt.arm))).toEqual({ kind: 'elf', platform: 'linux', arch: 'arm', abi: { kind: 'napi' } });
  });

  it('names Windows and macOS builds, and refuses what is not a binary or is cut short', () => {
    expect(readNativeFile(readFileSync(prebuilt.win32))).toEqual({ kind: 'other', platform: 'win32' });
    expect(readNativeFile(readFileSync(prebuilt.darwin))).toEqual({ kind: 'other', platform: 'darwin' });
    expect(readNativeFile(Buffer.from('#!/bin/sh\n'))).toMatchObject({ kind: 'invalid' });
    const bytes = readFileSync(sqlite);
    expect(readNativeFile(bytes.subarray(0, 40))).toEqual({ kind: 'invalid', reason: 'truncated or unknown ELF header' });
    expect(readNativeFile(bytes.subarray(0, 4096))).toEqual({ kind: 'invalid', reason: 'truncated ELF section or symbol table' });
  });
});

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A tree with the given files copied to the given paths. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'labgate-native-'));
  dirs.push(root);
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(dirname(join(root, to)), { recursive: true });
    copyFileSync(from, join(root, to));
  }
  return root;
}

const sqliteAt = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
const serial = (dir: string, file: string): string => `node_modules/@serialport/bindings-cpp/prebuilds/${dir}/${file}`;

describe('surveyNative and misfits', () => {
  it('take the target from the built files; a prebuilt package needs its own build for that target', () => {
    const root = tree({
      [sqliteAt]: sqlite,
      [serial('linux-x64', 'a.glibc.node')]: prebuilt.x64,
      [serial('linux-arm64', 'a.armv8.glibc.node')]: prebuilt.arm64,
    });
    const survey = surveyNative(root);
    expect(survey.decided).toEqual({ platform: 'linux', arch: process.arch, modules });
    expect(survey.problems).toEqual([]);
    expect(misfits(survey, x64)).toEqual([]);
    expect(misfits(survey, { ...x64, modules: 137 })).toEqual([`${sqliteAt} is built for Node ABI ${modules}, not 137`]);
    expect(misfits(survey, arm64)).toEqual([`${sqliteAt} is a linux-x64 binary, not linux-arm64`]);
  });

  it('find a prebuild directory that holds another CPU, and ignore musl builds on glibc targets', () => {
    const mislabelled = tree({ [serial('linux-arm64', 'a.armv8.glibc.node')]: prebuilt.x64 });
    expect(misfits(surveyNative(mislabelled), arm64)).toEqual([
      `node_modules/@serialport/bindings-cpp has no prebuilt binary for linux-arm64 (Node ABI ${modules}) that fits`,
      `${serial('linux-arm64', 'a.armv8.glibc.node')} is labelled linux-arm64 but is a linux-x64 napi binary`,
    ]);
    const muslOnly = tree({ [serial('linux-arm64', 'a.armv8.musl.node')]: prebuilt.arm64musl });
    expect(misfits(surveyNative(muslOnly), arm64)).toEqual([
      `node_modules/@serialport/bindings-cpp has no prebuilt binary for linux-arm64 (Node ABI ${modules}) that fits`,
    ]);
  });

  it('report built files that disagree with each other, and files that are no binary', () => {
    const root = tree({
      [sqliteAt]: sqlite,
      'node_modules/other/build/Release/other.node': prebuilt.arm64,
      'node_modules/junk/x.node': join(repo, 'package.json'),
    });
    expect(surveyNative(root).problems).toEqual([
      'node_modules/junk/x.node: not an ELF, Mach-O or PE file',
      expect.stringMatching(/^built native modules are for different machines: .*\(linux-x64\), .*other\.node \(linux-arm64\)$/),
    ]);
  });
});

describe('the manifest', () => {
  const facts: PackFacts = { version: '1.2.3', commit: 'abcdef123456', storeSchema: 2, packer: { ...x64, node: '20.20.2' } };

  it('says what the files say, even when the packing node is another machine (a cross-pack)', () => {
    const root = tree({ [sqliteAt]: prebuilt.arm64, [serial('linux-arm64', 'a.armv8.glibc.node')]: prebuilt.arm64 });
    const built = buildManifest(root, facts);
    expect(built.kind).toBe('ok');
    if (built.kind !== 'ok') return;
    expect(built.manifest).toMatchObject({ version: '1.2.3', platform: 'linux', arch: 'arm64', modules, packedWith: facts.packer });
    expect(packFileName(built.manifest)).toBe(`labgate-1.2.3-abcdef123456-linux-arm64-abi${modules}.tar.gz`);
    expect(refusals(root, built.manifest, x64)).toEqual([`packed for linux-arm64, Node ABI ${modules}; this machine's node is linux-x64, Node ABI ${modules}`]);
    expect(refusals(root, built.manifest, arm64)).toEqual([]);
  });

  it('is refused when it is missing, malformed, or says something its files contradict', () => {
    const root = tree({ [sqliteAt]: sqlite });
    expect(readManifest(root)).toEqual({ kind: 'invalid', problems: [`no ${MANIFEST_FILE}: not made by this installer's --pack`] });
    writeFileSync(
      join(root, MANIFEST_FILE),
      JSON.stringify({ name: 'labgate', version: '1 2', commit: 'c', platform: 'linux', arch: 'x64', modules: '115', native: [] }),
    );
    expect(readManifest(root)).toEqual({ kind: 'invalid', problems: [`${MANIFEST_FILE}: missing or malformed version, modules, storeSchema`] });
    const built = buildManifest(root, facts);
    if (built.kind !== 'ok') throw new Error('expected a manifest');
    copyFileSync(prebuilt.arm64, join(root, sqliteAt));
    expect(refusals(root, built.manifest, x64)).toEqual([`the manifest lies: ${sqliteAt} is a linux-arm64 binary, not linux-x64`]);
  });
});
