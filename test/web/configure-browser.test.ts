// From cable to first result on the page alone, in Chromium: a fresh `labgate run` with one running instrument (chem1)
// and the real PostgreSQL and LIMS test server as sinks; `labgate emulate` is plugged into a new socat pseudo-terminal
// that appears in the watched directory. Everything after that is the page: the new port's card, unlocking changes,
// adding the instrument from the detected settings, mapping its four codes from the suggestions, reprocessing, and the
// first results sent to both sinks. chem1's link never drops. No file is edited and no command run by the test after
// the start. It prints how long it took (the walk-through's timing in docs/adding-an-analyzer.md).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { centralDatabase } from '../e2e/central.js';
import { astmCodes, astmInstrument } from '../e2e/analyzers.js';
import { Cable, freePort, GatewayChild, requireSocat, scratch, startLims, until, writeConfig } from '../e2e/harness.js';
import { closeSharedBrowser, sharedBrowser } from './chromium.js';
import { screenshot } from './screenshots.js';

const ADMIN = 'browser-admin-token-7c41e0a9d2';
const bin = new URL('../../bin/labgate.js', import.meta.url).pathname;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(closeSharedBrowser);

describe('adding an analyzer on the page alone, in Chromium', () => {
  it(
    'detects it, adds it, maps its four codes, reprocesses, and sends the first results to PostgreSQL and the LIMS; chem1 never drops',
    { timeout: 150_000 },
    async () => {
      requireSocat();
      const s = scratch('configure');
      cleanups.push(s.cleanup);
      const [lims, pg] = [await startLims(), await centralDatabase()];
      cleanups.push(
        () => lims.stop(),
        () => pg.close(),
      );
      const chem1Cable = new Cable(s.dir);
      await chem1Cable.plug();
      cleanups.push(() => chem1Cable.unplug());
      const byId = join(s.dir, 'by-id');
      mkdirSync(byId);
      const httpPort = await freePort();
      const file = writeConfig({ dir: s.dir, httpPort, instruments: [astmInstrument('chem1', chem1Cable.device, astmCodes)], lims, pg });
      const config = JSON.parse(readFileSync(file, 'utf8')) as { gateway: Record<string, unknown> & { http: object } };
      writeFileSync(join(s.dir, 'admin-token'), ADMIN, { mode: 0o600 });
      config.gateway.http = { ...config.gateway.http, adminTokenFile: join(s.dir, 'admin-token') };
      config.gateway['newPortDirectories'] = [byId];
      writeFileSync(file, JSON.stringify(config));
      const gateway = new GatewayChild(file, httpPort, s.dir);
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start();
      await until(async () => (await gateway.health()).body.instruments[0]?.state === 'connected', 10_000, 'chem1 to connect');
      const chem1 = (await gateway.health()).body.instruments[0]!;
      const base = `http://127.0.0.1:${httpPort}`;
      const page = await (await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      cleanups.push(() => page.context().close());
      await page.goto(`${base}/`);

      // The cable: a new pseudo-terminal in the watched directory, the emulator at its far end.
      const started = Date.now();
      const cable = new Cable(s.dir, byId, 'usb-Emulator_ASTM_A10K3JQ2-if00-port0');
      await cable.plug();
      cleanups.push(() => cable.unplug());
      const emulator = spawn(process.execPath, [bin, 'emulate', '--port', cable.analyzer, '--baud', '9600', '--every', '1', '--reply-timeout', '2'], {
        stdio: 'ignore',
      });
      cleanups.push(() => void emulator.kill('SIGKILL'));
      const lap: Record<string, number> = {};
      const mark = (what: string): void => void (lap[what] = Math.round((Date.now() - started) / 100) / 10);

      // The page detects it: a new port card with the settings found.
      const card = `[data-new-port="${cable.device}"]`;
      await page.waitForSelector(`${card}[data-detecting="found"]`, { timeout: 40_000, state: 'attached' });
      expect(await page.innerText(`${card} .finding`)).toMatch(/^ASTM at 9600 8N1: (ENQ|EOT)/);
      mark('detected');
      await page.click(`${card} a:has-text("Use these settings")`);
      // Changing needs the admin token: unlock, as a named person.
      await page.fill('#f-name', 'Lea Technician');
      await page.fill('#f-admintoken', ADMIN);
      await page.click('button:has-text("Unlock changes")');
      expect(await page.inputValue('#f-baudRate')).toBe('9600');
      expect(await page.inputValue('#f-driver')).toBe('astm');
      await page.fill('#f-id', 'chem2');
      await page.selectOption('#f-timezone', 'UTC');
      await page.click('button:has-text("Preview the change")');
      expect(await page.innerText('[data-plan]')).toContain('chem2 started');
      expect(await page.innerText('[data-diff]')).toContain(`path: "${cable.device}"`);
      await screenshot(page, 'configure-add-preview.png', { fullPage: true });
      await page.click('button:has-text("Apply")');
      expect(await page.innerText('[data-applied]')).toMatch(/Applied: chem2 added \(astm on .*\)\. chem2 started/);
      mark('added');

      // Its first message is kept, rejected for want of a mapping; Codes seen offers the form.
      await page.goto(`${base}/`);
      await page.waitForSelector('[data-map="chem2"]', { timeout: 20_000, state: 'attached' });
      mark('codes seen');
      await page.click('[data-map="chem2"]');
      const suggestions = page.locator('[data-suggestion] button');
      expect(await suggestions.count()).toBe(4);
      for (let i = 0; i < 4; i++) await suggestions.nth(i).click();
      const loincs = await page
        .locator('input[name^="loinc."]')
        .evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value).filter(Boolean));
      expect(loincs.sort()).toEqual(['14682-9', '14749-6', '2823-3', '2951-2']);
      await screenshot(page, 'configure-mapping.png', { fullPage: true });
      await page.click('button:has-text("Preview the change")');
      expect(await page.innerText('[data-plan]')).toContain('chem2: the new mapping from its next message');
      await page.click('button:has-text("Apply")');
      expect(await page.innerText('[data-reprocess="chem2"]')).toMatch(/1 rejected message of chem2 now read as\s+4 results/);
      await page.click('button:has-text("Reprocess them")');
      expect(await page.innerText('[data-reprocessed]')).toContain('chem2: 1 message reprocessed, 4 results stored.');
      mark('mapped and reprocessed');

      // The first results, sent to both sinks, on the page.
      await page.click('a:has-text("Recent results")');
      for (const sink of ['postgres', 'lims']) {
        await until(
          async () => (await page.locator(`#results tr:has(td:text-is("chem2")) .delivery-sent[data-sink="${sink}"]`).count()) === 4,
          20_000,
          `chem2's results sent to ${sink}`,
        );
      }
      mark('first result in both sinks');
      const central = await pg.pool.query(`SELECT count(*)::int AS n FROM "${pg.schema}".result_load WHERE instrument_id = 'chem2'`);
      expect(central.rows[0].n).toBe(4);
      expect((await lims.stats()).records).toBe(4);
      const after = (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')!;
      // Connected since before the new port was plugged (the steady clock may move `since` by a fraction of a millisecond).
      expect(after, "chem1's link never dropped").toMatchObject({ state: 'connected', reconnects: 0, failedOpens: 0 });
      expect(Math.abs(after.since - chem1.since)).toBeLessThan(1_000);
      console.log(`configure-browser: cable to first result in both sinks ${lap['first result in both sinks']} s ${JSON.stringify(lap)}`);
    },
  );
});
