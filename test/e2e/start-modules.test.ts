// What `labgate run` loads for a configuration of one ASTM instrument with PostgreSQL and the LIMS, read from the
// child's own module loads (test/support/module-log.ts): after a power cut the analyzer's first ACK waits for every
// module loaded before it, so what this configuration does not use is not loaded at all, and the status and
// configuration pages are loaded by the first request for a page, not by /healthz.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { astmCodes, astmInstrument } from './analyzers.js';
import { cabledScratch, freePort, GatewayChild, writeConfig, type LimsChild } from './harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const root = fileURLToPath(new URL('../../', import.meta.url));
const moduleLog = join(root, 'dist/test/support/module-log.js');

// The repository's files the child loaded so far, relative to dist/ (`src/sinks/lims.js`), and package entries. A
// file of the bundle stands for the compiled modules in it (dist/bundle/modules.json, written by the build).
function loaded(file: string): string[] {
  if (!existsSync(file)) return [];
  const bundled = JSON.parse(readFileSync(join(root, 'dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>;
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((url) => fileURLToPath(url))
    .map((path) => (path.includes('/dist/') ? path.slice(path.lastIndexOf('/dist/') + '/dist/'.length) : path))
    .flatMap((path) => (path.startsWith('bundle/') ? (bundled[path.slice('bundle/'.length)] ?? [path]) : [path]));
}

describe('labgate run loads what its configuration uses', () => {
  it('one ASTM instrument: no HL7 or line driver, no FHIR sink, no demo; the pages at the first request for one', { timeout: 60_000 }, async () => {
    const { dir, cable } = await cabledScratch('modules', cleanups);
    const httpPort = await freePort();
    // Sinks on ports nobody listens on: their modules load, their drains wait.
    const lims = { url: `http://127.0.0.1:${await freePort()}`, token: 'modules-static-token', resourcePath: '/api/v1/results' } as LimsChild;
    const pg = { url: `postgres://labgate@127.0.0.1:${await freePort()}/lab`, schema: 'labgate' };
    const config = writeConfig({ dir, httpPort, instruments: [astmInstrument('chem1', cable.device, astmCodes)], lims, pg });
    const gateway = new GatewayChild(config, httpPort, dir);
    cleanups.push(() => gateway.stopIfRunning());
    const log = join(dir, 'modules.log');
    await gateway.start({ NODE_OPTIONS: `--import=${moduleLog}`, LABGATE_MODULE_LOG: log });

    const atReady = loaded(log);
    expect(atReady).toEqual(expect.arrayContaining(['src/commands/run.js', 'drivers/astm/runner.js', 'src/sinks/postgres.js', 'src/sinks/lims.js']));
    // fhir-ucum.js is the configuration's check of sinks.fhir.ucumUnits, a pure function, not the sink.
    // The HL7 and line drivers' options schemas are the configuration's (config/driver-options.ts) and MLLP's block bytes
    // are port detection's (detect/burst.ts); their decoders and runners are neither.
    const unused = atReady.filter((f) => /^(src\/(sinks\/fhir(?!-ucum)|demo\/)|drivers\/(hl7|line)\/(?!options|mllp))/.test(f));
    expect(unused, 'modules of what this configuration does not use').toEqual([]);
    const pages = atReady.filter((f) => /^src\/(web\/status\/render-|web\/config\/|gateway\/web-pages)/.test(f));
    expect(pages, 'page modules loaded before any page was asked for (/healthz was)').toEqual([]);

    // Node's process metrics are added once the port is open (their collectors are most of prom-client's files).
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toContain('labgate_process_resident_memory_bytes');
    expect(metrics).toContain('labgate_nodejs_eventloop_lag_p99_seconds');
    expect(
      loaded(log).filter((f) => f.startsWith('src/web/status/render-')),
      '/metrics loads no page',
    ).toEqual([]);

    const page = await fetch(`http://127.0.0.1:${httpPort}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('gw-e2e');
    expect(loaded(log)).toEqual(expect.arrayContaining(['src/gateway/web-pages.js', 'src/web/status/render-page.js', 'src/web/config/routes.js']));
  });
});
