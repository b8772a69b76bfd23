import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfigText } from '../../src/config/load.js';
import { runCli } from '../fixtures/cli.js';

const valid = `
gateway: {id: gw1}
instruments:
  - {id: chem1, driver: astm, timezone: Europe/Vienna, transport: {kind: serial, path: /dev/serial/by-id/a}}
  - {id: hema1, driver: hl7, timezone: UTC, transport: {kind: tcp-server, port: 5000}}
`;

const broken = `
gateway: {id: gw1, http: {host: 0.0.0.0}}
instruments:
  - {id: chem1, driver: astm, timezone: Europe/Vienna, transport: {kind: serial, path: /dev/serial/by-id/a}}
  - {id: chem1, driver: astm, timezone: Europe/Vienna, transport: {kind: serial, path: /dev/serial/by-id/b, baudRate: 96000}}
  - {id: hema1, driver: hl7x, timezone: Mars/Olympus, transport: {kind: serial, path: /dev/serial/by-id/a, baudrate: 9600}}
sinks:
  postgres: {url: "postgres://lab:hunter2@db:5432/lab"}
delivery: {backoff: {baseMs: 5000, capMs: 100}}
`;

const run = runCli;

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-config-'));
  const path = join(dir, 'labgate.yaml');
  writeFileSync(path, text);
  return path;
}

describe('configuration validation', () => {
  it('accepts a valid file and applies defaults', () => {
    const result = parseConfigText(valid);
    expect(result.kind).toBe('ok');
    if (result.kind !== 'ok') return;
    expect(result.config.instruments[0]?.transport).toMatchObject({ kind: 'serial', baudRate: 9600, dataBits: 8, parity: 'none' });
    expect(result.config.gateway.http).toEqual({ host: '127.0.0.1', port: 8080, maxConnections: 256 });
  });

  it('names the path, what was expected and what it got', () => {
    const result = parseConfigText(broken);
    expect(result.kind).toBe('invalid');
    if (result.kind !== 'invalid') return;
    const lines = result.problems.map((p) => `${p.path}: ${p.message}`);
    expect(lines).toContain('instruments[1].transport.baudRate: expected one of 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200 or auto, got 96000');
  });

  it('reports schema and cross-field problems together, all at once', () => {
    const result = parseConfigText(broken);
    if (result.kind !== 'invalid') throw new Error('expected invalid');
    const byPath = new Map(result.problems.map((p) => [p.path, p.message]));
    // In the file's order, schema and cross-field problems interleaved.
    expect(result.problems.map((p) => p.path)).toEqual([
      'gateway.http.tokenFile',
      'instruments[1].id',
      'instruments[1].transport.baudRate',
      'instruments[2].driver',
      'instruments[2].timezone',
      'instruments[2].transport',
      'instruments[2].transport.path',
      'sinks.postgres.url',
      'delivery.backoff.capMs',
    ]);
    expect(byPath.get('instruments[1].id')).toBe("duplicate id 'chem1' (also instruments[0])");
    expect(byPath.get('instruments[2].transport')).toBe("unknown key 'baudrate'");
    expect(byPath.get('instruments[2].driver')).toMatch(/expected one of "astm"\|"hl7"\|"line"\|"auto", got "hl7x"/);
    expect(byPath.get('sinks.postgres.url')).toMatch(/must not contain a password/);
    expect(result.problems.map((p) => p.message).join('\n')).not.toContain('hunter2');
  });

  it('reports missing sections and YAML syntax errors', () => {
    const missing = parseConfigText('instruments: []\n');
    expect(missing.kind === 'invalid' && missing.problems.map((p) => p.path)).toEqual(['gateway']);
    const syntax = parseConfigText('gateway: {id: gw1\n');
    expect(syntax.kind === 'invalid' && syntax.problems[0]?.path).toMatch(/^\(yaml line \d+\)$/);
  });

  it('flags two listeners on one port', () => {
    const result = parseConfigText(`
gateway: {id: gw1, http: {port: 5000}}
instruments:
  - {id: a, driver: hl7, timezone: UTC, transport: {kind: tcp-server, port: 5000}}
  - {id: b, driver: hl7, timezone: UTC, transport: {kind: tcp-server, host: 127.0.0.1, port: 5001}}
  - {id: c, driver: hl7, timezone: UTC, transport: {kind: tcp-server, port: 5001}}
`);
    if (result.kind !== 'invalid') throw new Error('expected invalid');
    expect(result.problems).toEqual([
      { path: 'instruments[0].transport.port', message: 'port 5000 is also used by gateway.http' },
      { path: 'instruments[2].transport.port', message: 'port 5001 is also used by instruments[1].transport' },
    ]);
  });

  it('takes auto for the serial settings and the driver of an instrument being detected, and auto nowhere else', () => {
    const detecting = parseConfigText(`
gateway: {id: gw1}
instruments:
  - {id: new1, driver: auto, timezone: UTC, transport: {kind: serial, path: /dev/labgate/port3, baudRate: auto, dataBits: auto, parity: auto}}
  - {id: new2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/labgate/port4, baudRate: auto}}
`);
    expect(detecting.kind === 'ok' ? detecting.config.instruments.map((i) => i.transport) : detecting.problems).toEqual([
      expect.objectContaining({ baudRate: 'auto', dataBits: 'auto', parity: 'auto' }),
      expect.objectContaining({ baudRate: 'auto', dataBits: 8, parity: 'none' }),
    ]);
    const wrong = parseConfigText(`
gateway: {id: gw1}
instruments:
  - {id: a, driver: auto, timezone: UTC, transport: {kind: serial, path: /dev/labgate/port3}}
  - {id: b, driver: auto, timezone: UTC, transport: {kind: tcp-server, port: 5000}}
  - {id: c, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/labgate/port4, dataBits: 9, parity: mark}}
`);
    expect(wrong.kind === 'invalid' ? wrong.problems.map((p) => p.path) : []).toEqual([
      'instruments[0].driver',
      'instruments[1].driver',
      'instruments[2].transport.dataBits',
      'instruments[2].transport.parity',
    ]);
  });

  it('loadConfig throws CONFIG_INVALID listing every problem', () => {
    expect(() => loadConfig(file(broken))).toThrow(/instruments\[1\]\.transport\.baudRate: expected one of .*, got 96000/);
  });
});

describe('labgate check-config', () => {
  it('exits 0 for a valid file', async () => {
    const r = await run(['check-config', '--config', file(valid)]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ok — gateway gw1, 2 instrument\(s\)/);
  });

  it('exits 2 and prints every problem for an invalid file', async () => {
    const r = await run(['check-config', '--config', file(broken)]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/9 problems/);
    expect(r.err).toContain('  instruments[1].transport.baudRate: expected one of 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200 or auto, got 96000');
  });

  it('checks driver options too, as decode and run do, in the same run as every other problem', async () => {
    const options = `
gateway: {id: gw1}
instruments:
  - {id: chem1, driver: astm, timezone: Europe/Vienna, transport: {kind: serial, path: /dev/serial/by-id/a}, options: {maxFrameBytes: oops}}
  - {id: hema1, driver: hl7, timezone: Mars/Olympus, transport: {kind: tcp-server, port: 5000}, options: {unit: whole}}
  - {id: lyte1, driver: line, timezone: UTC, transport: {kind: serial, path: /dev/serial/by-id/b}, options: {start: '^S', end: '^E'}}
`;
    const r = await run(['check-config', '--config', file(options)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('instruments[0].options.maxFrameBytes: expected number, received string, got "oops"');
    expect(r.err).toMatch(/instruments\[1\]\.options\.unit: 'whole' is not a field location/);
    expect(r.err).toMatch(/instruments\[1\]\.timezone/);
    expect(r.err).toMatch(/instruments\[2\]\.options: results are read by `result` or by `columns`/);
    const decode = await run(['decode', '--config', file(options), '--instrument', 'chem1']);
    expect(decode.code).toBe(2);
  });

  it('warns, exit code 0, that an instrument listening on TCP without an allow-list can be held by anyone on the network', async () => {
    const open = await run(['check-config', '--schema-only', '--config', file(valid)]);
    expect(open.code).toBe(0);
    expect(open.err).toContain('instruments[1].transport.allow: not set: anyone on the network can connect to port 5000 and hold it while hema1 waits');
    const allowed = await run(['check-config', '--schema-only', '--config', file(valid.replace('port: 5000}', "port: 5000, allow: ['10.0.0.7']}"))]);
    expect(allowed.code).toBe(0);
    expect(allowed.err).not.toContain('transport.allow');
  });

  it('exits 2 for an unreadable file', async () => {
    const r = await run(['check-config', '--config', '/nonexistent/labgate.yaml']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot read .*ENOENT/);
  });
});

// Its keys against the schema, one by one at their places: test/docs/config-keys.test.ts.
describe('config/labgate.example.yaml', () => {
  const examplePath = fileURLToPath(new URL('../../config/labgate.example.yaml', import.meta.url));
  const text = readFileSync(examplePath, 'utf8');

  it('is valid', () => {
    const result = parseConfigText(text);
    expect(result.kind === 'invalid' ? result.problems : []).toEqual([]);
  });
});
