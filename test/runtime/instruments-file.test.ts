// The configuration's two files: the main file and the instruments file the status page writes in the state directory.
// check-config, run and reload read both and validate their union as one document; a problem in the instruments file
// is named by that file; a missing instruments file holds no instruments, an unreadable one is a problem.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readConfiguration } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { ConfigReloader } from '../../src/gateway/reload.js';
import { runCli } from '../fixtures/cli.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-instruments-file-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const main = (dir: string, extra = ''): string => `
gateway: {id: gw1, dataDir: ${JSON.stringify(join(dir, 'data'))}, http: {port: 8080}${extra}}
instruments:
  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/a}}
  - {id: hema1, driver: hl7, timezone: UTC, transport: {kind: tcp-server, port: 5100}}
`;

/** The main file at dir/labgate.yaml and, when given, the instruments file at dir/data/instruments.yaml. */
function files(dir: string, instruments?: string, extra = ''): { file: string; instrumentsFile: string } {
  const file = join(dir, 'labgate.yaml');
  writeFileSync(file, main(dir, extra));
  const instrumentsFile = join(dir, 'data', 'instruments.yaml');
  if (instruments !== undefined) {
    mkdirSync(join(dir, 'data'), { recursive: true });
    writeFileSync(instrumentsFile, instruments);
  }
  return { file, instrumentsFile };
}

describe('the instruments file beside the main configuration', () => {
  it("runs the main file's instruments, then the instruments file's, and check-config says where they come from", async () => {
    const dir = scratch();
    const { file, instrumentsFile } = files(dir, 'instruments:\n  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}}\n');
    const { result, layout } = readConfiguration(file);
    expect(result.kind === 'ok' ? result.config.instruments.map((i) => i.id) : result.problems).toEqual(['chem1', 'hema1', 'chem2']);
    expect(layout).toMatchObject({ file, instrumentsFile, mainCount: 2 });
    const r = await runCli(['check-config', '--config', file, '--schema-only']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`3 instrument(s) (3 enabled, 1 of them from ${instrumentsFile})`);
  });

  it('holds no instruments while the file does not exist, and an empty file none either', async () => {
    const dir = scratch();
    const { file, instrumentsFile } = files(dir);
    const r = await runCli(['check-config', '--config', file, '--schema-only']);
    expect(r.out).toContain(`2 instrument(s) (2 enabled; no ${instrumentsFile} yet)`);
    writeFileSync(join(dir, 'labgate.yaml'), main(dir));
    mkdirSync(join(dir, 'data'));
    writeFileSync(instrumentsFile, '');
    expect(readConfiguration(file).result.kind).toBe('ok');
  });

  it('reads gateway.instrumentsFile where it is set', () => {
    const dir = scratch();
    const elsewhere = join(dir, 'managed.yaml');
    writeFileSync(elsewhere, 'instruments: [{id: chem3, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/c}}]\n');
    const { file } = files(dir, undefined, `, instrumentsFile: ${JSON.stringify(elsewhere)}`);
    const { result } = readConfiguration(file);
    expect(result.kind === 'ok' && result.config.instruments.map((i) => i.id)).toEqual(['chem1', 'hema1', 'chem3']);
  });

  it('validates the union: an id, a serial port and a listening port used in both files are problems named in the instruments file', async () => {
    const dir = scratch();
    const { file, instrumentsFile } = files(
      dir,
      [
        'instruments:',
        '  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/x}}',
        '  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/a}}',
        '  - {id: hema2, driver: hl7, timezone: Mars/Base, transport: {kind: tcp-server, port: 5100}}',
      ].join('\n'),
    );
    const r = await runCli(['check-config', '--config', file, '--schema-only']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`  ${instrumentsFile}:instruments[0].id: duplicate id 'chem1' (also instruments[0])`);
    expect(r.err).toContain(`  ${instrumentsFile}:instruments[1].transport.path: serial port '/dev/a' is also used by instruments[0]`);
    expect(r.err).toContain(`  ${instrumentsFile}:instruments[2].transport.port: port 5100 is also used by instruments[1]`);
    expect(r.err).toContain(`  ${instrumentsFile}:instruments[2].timezone: expected an IANA time zone`);
    expect(r.err).toMatch(/4 problems/);
  });

  it('warns about a LOINC whose check digit is wrong, in either file (the page refuses one)', async () => {
    const dir = scratch();
    const { file, instrumentsFile } = files(
      dir,
      'instruments: [{id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}, mapping: [{code: GLU, loinc: 2345-8}, {code: X, loinc: X-LOCAL}]}]\n',
    );
    const r = await runCli(['check-config', '--config', file, '--schema-only']);
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      `  ${instrumentsFile}:instruments[0].mapping[0].loinc: 2345-8 is not a LOINC: its check digit should be 7 (2345-7); check for a typing slip`,
    );
    expect(r.err).not.toContain('mapping[1]');
  });

  it('refuses anything but instruments in the instruments file, YAML errors and an unreadable file, each named by the file', () => {
    const dir = scratch();
    const { file, instrumentsFile } = files(dir, 'instruments: []\nsinks: {}\n');
    const problems = (): unknown => {
      const { result } = readConfiguration(file);
      return result.kind === 'invalid' ? result.problems : [];
    };
    expect(problems()).toEqual([
      { path: `${instrumentsFile}:(root)`, message: "only instruments belong in this file, got 'sinks' (those go in the main file)" },
    ]);
    writeFileSync(instrumentsFile, 'instruments:\n  - {id: a\n');
    expect(problems()).toEqual([expect.objectContaining({ path: `${instrumentsFile}:(yaml line 3)` })]);
    writeFileSync(instrumentsFile, 'instruments: {id: a}\n');
    expect(problems()).toEqual([{ path: `${instrumentsFile}:instruments`, message: 'expected a list of instruments' }]);
    rmSync(instrumentsFile);
    mkdirSync(instrumentsFile);
    expect(problems()).toEqual([{ path: `${instrumentsFile}:(file)`, message: 'cannot read the instruments file: not a regular file (a directory)' }]);
  });

  it('checks a proposed instruments file without reading the one on disk', () => {
    const dir = scratch();
    const { file } = files(dir, 'instruments: []\n');
    const { result } = readConfiguration(file, {
      instrumentsText: 'instruments: [{id: hema1, driver: hl7, timezone: UTC, transport: {kind: tcp-server, port: 5200}}]',
    });
    expect(result.kind === 'invalid' && result.problems.map((p) => p.path)).toEqual([`${join(dir, 'data', 'instruments.yaml')}:instruments[0].id`]);
  });

  it('is read again by a reload: an instrument added there starts, the others untouched', async () => {
    const dir = scratch();
    const { file, instrumentsFile } = files(dir, 'instruments: []\n');
    const first = readConfiguration(file).result;
    if (first.kind !== 'ok') throw new Error('bad fixture');
    let running: Config = first.config;
    const quiet = { info: () => {}, warn: () => {}, error: () => {} };
    const reloader = new ConfigReloader({ file, current: () => running, apply: async (_plan, next) => void (running = next), now: () => 1, log: quiet });
    writeFileSync(instrumentsFile, 'instruments: [{id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}}]\n');
    expect(await reloader.reload()).toMatchObject({ outcome: 'applied', summary: 'chem2 started' });
    writeFileSync(instrumentsFile, 'instruments: [{id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}}]\n');
    expect(await reloader.reload()).toMatchObject({ outcome: 'refused', problems: [{ path: `${instrumentsFile}:instruments[0].id` }] });
    expect(running.instruments.map((i) => i.id)).toEqual(['chem1', 'hema1', 'chem2']);
  });
});
