// `labgate demo` end to end, as a person runs it: a real child process of the installed entry point (bin/labgate.js
// runs the compiled dist/, built by `npm test`'s pretest). It must exit 0 and its summary must prove exactly once.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'bin/labgate.js');

function runDemo(...flags: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'demo', ...flags], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/** Runs the demo, expects it to succeed and to prove exactly once in PostgreSQL and the LIMS; returns what it said. */
async function demoProvesPostgresAndLims(...flags: string[]): Promise<{ stdout: string; sent: number; ms: number }> {
  expect(existsSync(join(root, 'dist/src/commands/demo.js')), 'dist/ is missing: run `npm run build` first').toBe(true);
  const { code, stdout, stderr, ms } = await runDemo(...flags);
  expect(stderr, stdout).not.toContain('FAILED');
  expect(code, `${stdout}\n${stderr}`).toBe(0);
  const sent = Number(/sent by the analyzer\s+(\d+) results/.exec(stdout)?.[1]);
  expect(sent).toBeGreaterThan(0);
  expect(stdout).toContain(`exactly once in PostgreSQL: ${sent} of ${sent} results, 0 missing, 0 twice`);
  expect(stdout).toContain(`exactly once in the LIMS: ${sent} of ${sent} results, 0 missing, 0 applied twice`);
  return { stdout, sent, ms };
}

describe('labgate demo', () => {
  it('runs the whole pipeline with its faults and proves every result arrived exactly once in both sinks', async () => {
    const { stdout, ms } = await demoProvesPostgresAndLims();
    expect(stdout).toMatch(/^OK: every result arrived exactly once in both sinks/m);
    // The faults happened, and the status page's address was shown.
    expect(stdout).toMatch(/corrupted checksum → NAKed by the gateway, resent by the analyzer, accepted/);
    expect(stdout).toMatch(/LIMS back after \d+\.\d s/);
    expect(stdout).toMatch(/crash: the gateway stopped abruptly/);
    // The host query: orders for one of two specimens, exactly those tests run, each order's dispatch told to the LIMS.
    expect(stdout).toMatch(/query {2}DEMO-Q001, DEMO-Q002 → answered \d+ ms after the query: DEMO-Q001 GLU, K; DEMO-Q002 nothing to run/);
    expect(stdout).toMatch(/DEMO-Q001 {2}glucose \d+ mg\/dL, potassium [\d.]+ mmol\/L {2}→ stored/);
    expect(stdout).toContain('the LIMS was told each order reached the analyzer: demo-order-1|chem1, demo-order-2|chem1');
    // The HL7 analyzer's host query (QRY^Q02 on its own line): answered with its orders, its results in both sinks once.
    expect(stdout).toMatch(/query {2}DEMO-H001 → QCK\^Q02 \d+ ms after the query, DSR\^Q03 accepted: GLU, K/);
    expect(stdout).toContain('ORU^R01 DEMO-H001  GLU 5.8 mmol/L, K 4.3 mmol/L  → AA (stored)');
    expect(stdout).toContain('the LIMS was told each order reached the HL7 analyzer: demo-hl7-order-1|chem2, demo-hl7-order-2|chem2');
    expect(stdout).toContain("the HL7 analyzer's queried results: 2 of 2 exactly once in PostgreSQL and the LIMS");
    expect(stdout).toMatch(/status page: http:\/\/127\.0\.0\.1:\d+\/ {2}\(health: http:\/\/127\.0\.0\.1:\d+\/healthz\)/);
    // Synthetic accessions only, and no patient record content beyond the empty P record.
    expect(stdout.match(/\bDEMO-\d{4}\b/g)?.length).toBeGreaterThan(0);
    expect(ms).toBeLessThan(45_000);
  }, 90_000);

  it('--fhir: a FHIR server as the third sink, down with the LIMS and crashed into, holds exactly one Observation per result', async () => {
    const { stdout, sent } = await demoProvesPostgresAndLims('--fhir');
    expect(stdout).toContain(`exactly once on the FHIR server: ${sent} of ${sent} results, 0 missing, 0 twice`);
    expect(stdout).toContain(`FHIR server             ${sent} Observations; 0 rewritten by a re-send`);
    expect(stdout).toMatch(/The LIMS and the FHIR server are down/);
    expect(stdout).toMatch(/fhir +\d+ results in flight, \d+ of them already created on the FHIR server/);
    expect(stdout).toMatch(/^OK: every result arrived exactly once in all three sinks/m);
  }, 90_000);
});
