// `labgate decode` as a technician runs it: the built CLI in a real child process, a config file, a capture.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bytes, frame } from '../astm/mnemonics.js';

const bin = join(import.meta.dirname, '../../bin/labgate.js');
let dir: string;

const config = `
gateway: { id: gw-test }
instruments:
  - id: chem-1
    driver: astm
    timezone: Europe/Vienna
    transport: { kind: serial, path: /dev/null }
    options: { accession: { field: O.3, component: 1 } }
    mapping:
      - { code: GLU, loinc: 2345-7, unit: mg/dL }
`;

const message = (code: string, value: string): Buffer =>
  bytes(
    '<ENQ>' +
      frame(1, `H|\\^&|||chem^1|||||||P|1|20260701163000<CR>O|1|A100||^^^${code}<CR>R|1|^^^${code}|${value}|mg/dL||N||F||||20260701163000<CR>L|1|N<CR>`) +
      '<EOT>',
  );

function decode(args: string[], input?: Buffer): { status: number | null; lines: Record<string, unknown>[]; stderr: string } {
  const run = spawnSync(process.execPath, [bin, 'decode', ...args], { input, encoding: 'utf8' });
  const lines = run.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status: run.status, lines, stderr: run.stderr };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'labgate-decode-'));
  writeFileSync(join(dir, 'labgate.yaml'), config);
  writeFileSync(join(dir, 'glu.astm'), message('GLU', '98'));
  writeFileSync(join(dir, 'unmapped.astm'), message('XYZ', '1'));
});

describe('labgate decode', () => {
  it('prints one keyed result per line and exits 0', () => {
    const out = decode(['--config', join(dir, 'labgate.yaml'), '--instrument', 'chem-1', join(dir, 'glu.astm')]);
    expect(out.status).toBe(0);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatchObject({
      kind: 'result',
      accession: 'A100',
      analyteLoinc: '2345-7',
      instrumentId: 'chem-1',
      // 16:30 Vienna summer time is 14:30 UTC
      resultedAt: '2026-07-01T14:30:00+00:00',
      value: 98,
      valueText: '98',
      comparator: null,
      bound: null,
      unit: 'mg/dL',
      status: 'final',
      statusCode: 'F',
      qc: false,
    });
    expect(out.lines[0]?.dedupKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('prints a censored value with no number and a questionable one with its letter, never as final', () => {
    const raw = bytes(
      '<ENQ>' + frame(1, 'H|\\^&|||chem^1|||||||P|1|20260701163000<CR>O|1|A100||^^^GLU<CR>R|1|^^^GLU|<20|mg/dL||L||W||||20260701163000<CR>L|1|N<CR>') + '<EOT>',
    );
    const out = decode(['--config', join(dir, 'labgate.yaml'), '--instrument', 'chem-1'], raw);
    expect(out.status).toBe(0);
    expect(out.lines[0]).toMatchObject({ kind: 'result', valueText: '<20', value: null, comparator: '<', bound: 20, status: 'preliminary', statusCode: 'W' });
  });

  it('reads stdin and exits 3 with a reason when a code is unmapped', () => {
    const out = decode(['--config', join(dir, 'labgate.yaml'), '--instrument', 'chem-1'], message('XYZ', '1'));
    expect(out.status).toBe(3);
    expect(out.lines).toEqual([expect.objectContaining({ kind: 'rejected', reason: expect.stringContaining("'XYZ'") })]);
  });

  it('shows a host query as a query line; a receive-only instrument rejects it with the reason, a two-way one does not', () => {
    const raw = bytes('<ENQ>' + frame(1, 'H|\\^&|||chem^1|||||||P|1|20260701163000<CR>Q|1|^A100\\^A101||^^^GLU||||||||O<CR>L|1|N<CR>') + '<EOT>');
    const query = {
      kind: 'query',
      specimens: [
        { kind: 'id', accession: 'A100' },
        { kind: 'id', accession: 'A101' },
      ],
      tests: ['GLU'],
      request: 'orders',
      requestCode: 'O',
    };
    const oneWay = decode(['--config', join(dir, 'labgate.yaml'), '--instrument', 'chem-1'], raw);
    expect(oneWay.status).toBe(3);
    expect(oneWay.lines).toEqual([query, expect.objectContaining({ kind: 'rejected', reason: expect.stringContaining('query mode is off') })]);
    writeFileSync(
      join(dir, 'two-way.yaml'),
      config.replace('component: 1 } }', 'component: 1 }, orders: { query: true } }') +
        'sinks: { lims: { baseUrl: "http://127.0.0.1:9", auth: { kind: static, tokenFile: /t } } }\n',
    );
    const twoWay = decode(['--config', join(dir, 'two-way.yaml'), '--instrument', 'chem-1'], raw);
    expect(twoWay.status).toBe(0);
    expect(twoWay.lines).toEqual([query]);
  });

  it('exits 2 on an unknown instrument or a missing option', () => {
    expect(decode(['--config', join(dir, 'labgate.yaml'), '--instrument', 'nope']).status).toBe(2);
    const missing = decode(['--instrument', 'chem-1']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--config');
  });

  it('exits 2 naming the path of an invalid driver option', () => {
    writeFileSync(join(dir, 'bad.yaml'), config.replace('component: 1', 'component: 1, bogus: true'));
    const out = decode(['--config', join(dir, 'bad.yaml'), '--instrument', 'chem-1', join(dir, 'glu.astm')]);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('instruments[0].options');
  });
});

describe('labgate decode for HL7 and line instruments', () => {
  const hl7Config = `
gateway: { id: gw-test }
instruments:
  - id: chem-1
    driver: hl7
    timezone: "+01:00"
    transport: { kind: tcp-server, port: 5600 }
    mapping:
      - { code: K, loinc: 2823-3, unit: mmol/L }
`;
  const oru = [
    'MSH|^~\\&|ANALYZER|LAB|LIS|LAB|20260701153000||ORU^R01|MSG0001|P|2.5.1',
    'OBR|1||A100|PANEL',
    'OBX|1|NM|K^Potassium||4.1|mmol/L|3.5-5.1|N|||F|||20260701153000',
  ].join('\r');

  it('decodes with the configured framing: MLLP blocks by default, bare segments with framing none, never guessed', () => {
    writeFileSync(join(dir, 'hl7.yaml'), hl7Config);
    writeFileSync(join(dir, 'hl7-bare.yaml'), hl7Config + '    options: { framing: none }\n');
    const bare = decode(['--config', join(dir, 'hl7-bare.yaml'), '--instrument', 'chem-1'], Buffer.from(oru + '\r', 'latin1'));
    const framed = decode(['--config', join(dir, 'hl7.yaml'), '--instrument', 'chem-1'], Buffer.from(`\x0b${oru}\r\x1c\r`, 'latin1'));
    const guessed = decode(['--config', join(dir, 'hl7.yaml'), '--instrument', 'chem-1'], Buffer.from(oru + '\r', 'latin1'));
    expect(guessed.status).toBe(3);
    expect(guessed.lines).toEqual([
      expect.objectContaining({ kind: 'rejected', reason: expect.stringMatching(/outside any MLLP block ignored \(the instrument's framing is mllp\)/) }),
    ]);
    expect(bare.status).toBe(0);
    expect(bare.lines).toEqual([
      expect.objectContaining({ kind: 'result', accession: 'A100', analyteLoinc: '2823-3', value: 4.1, resultedAt: '2026-07-01T14:30:00+00:00' }),
    ]);
    expect(framed.lines).toEqual(bare.lines);
    const query = ['MSH|^~\\&|||||20241105101500||QRY^Q02|7|P|2.3.1', 'QRD|20241105101500|R|D|7|||RD|2411050031|OTH|||T|', 'QRF||||||RCT|COR|ALL||'].join('\r');
    const asked = decode(['--config', join(dir, 'hl7.yaml'), '--instrument', 'chem-1'], Buffer.from(`\x0b${query}\r\x1c\r`, 'latin1'));
    expect(asked.lines).toEqual([
      { kind: 'query', specimens: [{ kind: 'id', accession: '2411050031' }], tests: 'all', request: 'orders', requestCode: 'OTH' },
      { kind: 'rejected', reason: "host query QRY^Q02 not answered: this instrument's options.orders.query is off" },
    ]);
    // A100, 2823-3, chem-1 at 15:30 +01:00: the reference vector of the central system's key.
    expect(bare.lines[0]?.dedupKey).toBe('f737981efdd975cec05399faf6459a46f7763c508ac27bf6735dbdc1cb9c978f');
  });
});
