// The status page of a REAL running gateway in headless Chromium (issue 8's "done when"): `node bin/labgate.js
// run` as a child (test/e2e/harness.ts) with a socat cable, the real serialport binding, the ASTM emulator on the
// analyzer's end and the LIMS test server as its own process. The page follows the gateway live, without a
// reload: the instrument connected, results arriving, a LIMS dead letter retried from the page and then
// delivered, the cable pulled and the instrument red with its reason. A gateway on a non-loopback address
// (0.0.0.0, reached through 127.0.0.1) refuses every page and action without the token and works after login.
// Only the LIMS sink runs (no PostgreSQL), so the file is fast and independent of the database.
// Fails, never skips, when socat or Chromium is missing. With LABGATE_SCREENSHOTS=1 it saves docs/status-page-live.png
// for docs/operating.md (screenshots.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { systemClock } from '../../src/clock.js';
import { dedupKey, recordId } from '../../src/result.js';
import { astmCodes, astmInstrument, astmMessage } from '../e2e/analyzers.js';
import { Cable, freePort, GatewayChild, requireSocat, scratch, startLims, until, writeConfig, type LimsChild } from '../e2e/harness.js';
import { readStore } from '../e2e/store-view.js';
import { closeSharedBrowser, sharedBrowser } from './chromium.js';
import { screenshot } from './screenshots.js';

const TOKEN = 'e2e-status-page-token-4b1d9e7c';
/** The page polls every 2 s and a snapshot serves 2 s: a change shows within about 4 s. */
const LIVE_MS = 10_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(closeSharedBrowser);

/** A gateway child with one ASTM instrument `chem1` on a plugged socat cable and only the LIMS sink. */
async function runningGateway(
  name: string,
  http?: (dir: string) => object,
): Promise<{ dir: string; cable: Cable; lims: LimsChild; gateway: GatewayChild; base: string }> {
  requireSocat();
  const s = scratch(`web-${name}`);
  cleanups.push(s.cleanup);
  const lims = await startLims();
  cleanups.push(() => lims.stop());
  const cable = new Cable(s.dir);
  await cable.plug();
  cleanups.push(() => cable.unplug());
  const httpPort = await freePort();
  const configFile = writeConfig({ dir: s.dir, httpPort, instruments: [astmInstrument('chem1', cable.device, astmCodes)], lims });
  if (http) {
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as { gateway: { http: object } };
    config.gateway.http = { ...http(s.dir), port: httpPort };
    writeFileSync(configFile, JSON.stringify(config, null, 2));
  }
  const gateway = new GatewayChild(configFile, httpPort, s.dir);
  cleanups.push(() => gateway.stopIfRunning());
  return { dir: s.dir, cable, lims, gateway, base: `http://127.0.0.1:${httpPort}` };
}

async function browserContext(): Promise<BrowserContext> {
  const context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 900 } });
  cleanups.push(() => context.close());
  return context;
}

/** Waits until `selector` is in the page: the live update arrived. */
async function live(page: Page, selector: string): Promise<void> {
  await page.waitForSelector(selector, { timeout: LIVE_MS, state: 'attached' });
}

/** The value of one fact (`Results today`, `Dead letters`...) on a card. */
function fact(page: Page, card: string, label: string): Promise<string> {
  return page.locator(`${card} .fact:has(dt:text-is("${label}")) dd`).innerText();
}

/** Sets the LIMS test server's faults at run time. */
async function limsFaults(lims: LimsChild, faults: object): Promise<void> {
  const res = await fetch(`${lims.url}/_admin/faults`, { method: 'POST', body: JSON.stringify(faults) });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

describe('the status page of a running labgate, in Chromium', () => {
  it(
    'shows the instrument connected and results arriving live; a LIMS dead letter is retried from the page and delivered; an unplugged cable turns it red with the reason',
    { timeout: 40_000 },
    async () => {
      const { dir, cable, lims, gateway, base } = await runningGateway('live');
      // The LIMS refuses one record (422, a record-specific permanent failure): the GLU result of LIVE-2.
      const deadKey = dedupKey({ accession: 'LIVE-2', analyteLoinc: '30000-0', instrumentId: 'chem1', resultedAt: '2026-07-01T12:00:00+00:00' });
      const deadId = recordId(deadKey);
      await limsFaults(lims, { reject422: [deadId] });
      await gateway.start();

      const page = await (await browserContext()).newPage();
      expect((await page.goto(base + '/'))?.status()).toBe(200);
      await live(page, '[data-instrument="chem1"].card-green');
      expect(await page.innerText('[data-instrument="chem1"] h3')).toContain('Connected');
      expect(await page.innerText('[data-instrument="chem1"] code')).toBe(cable.device);
      expect(await page.innerText('#results')).toContain('No results yet.');
      await page.evaluate('window.notReloaded = true');

      const analyzer = await cable.openAnalyzer();
      cleanups.push(() => analyzer.close());
      const sent = await new AstmEmulator(analyzer, systemClock, { replyTimeoutMs: 2_000 }).send([astmMessage('LIVE-1', 3), astmMessage('LIVE-2', 2)]);
      expect(sent).toMatchObject({ kind: 'sent' });
      const stored = readStore(gateway.dataDir).results;
      expect(stored).toHaveLength(5);
      expect(stored.find((r) => r.dedupKey === deadKey)?.recordId, 'the gateway sends the record id the test computed').toBe(deadId);

      // Results arrive on the open page, delivered to the LIMS, except the refused one: a dead letter with the reason.
      await live(page, `#results tr[data-key="${stored[4]!.dedupKey}"]`);
      await live(page, `[data-dead-letter="${deadKey}"]`);
      for (const r of stored.filter((x) => x.dedupKey !== deadKey)) await live(page, `tr[data-key="${r.dedupKey}"] .delivery-sent[data-sink="lims"]`);
      expect(await page.locator('#results tbody tr').count()).toBe(5);
      expect(await page.innerText(`tr[data-key="${deadKey}"] [data-sink="lims"]`)).toBe('lims: dead');
      expect(await page.innerText(`[data-dead-letter="${deadKey}"]`)).toContain('LIVE-2');
      expect(await page.innerText(`[data-dead-letter="${deadKey}"] .reason`)).toMatch(/422/);
      expect(await fact(page, '[data-instrument="chem1"]', 'Messages today')).toBe('2');
      expect(await fact(page, '[data-instrument="chem1"]', 'Results today')).toBe('5');
      expect(await fact(page, '#sink-lims', 'Dead letters')).toBe('1');
      expect(await page.getAttribute('#sink-lims [data-lamp]', 'data-lamp')).toBe('amber');
      expect(await page.evaluate('window.notReloaded'), 'all of it arrived without a reload').toBe(true);
      expect(await lims.recordStatus(deadId)).toBe(404);

      // The LIMS accepts it now; the technician retries it from the page (a form POST, then the page again).
      await limsFaults(lims, { reject422: [] });
      await page.click(`[data-dead-letter="${deadKey}"] button`);
      await live(page, '.flash');
      expect(await page.innerText('.flash')).toBe('1 dead letter for lims queued again.');
      await page.evaluate('window.notReloaded = true');
      await live(page, `tr[data-key="${deadKey}"] .delivery-sent[data-sink="lims"]`);
      await live(page, '#dead-letters .empty');
      expect(await page.innerText('#dead-letters')).toContain('No dead letters.');
      await live(page, '#sink-lims.card-green');
      expect(await fact(page, '#sink-lims', 'Dead letters')).toBe('0');
      expect(await page.getAttribute('#summary [data-lamp]', 'data-lamp')).toBe('green');
      expect(await lims.recordStatus(deadId)).toBe(200);
      expect(readStore(gateway.dataDir).outbox.filter((o) => o.state !== 'sent')).toEqual([]);
      expect(auditOf(dir, 'dead-letter-retry')).toEqual([{ actor: 'web-local', subject: deadKey }]);
      await screenshot(page, 'status-page-live.png', { fullPage: true });

      // The cable is pulled: the instrument turns red with the reason, live, and the headline says so.
      await cable.unplug();
      await live(page, '[data-instrument="chem1"].card-red');
      // The port closes, then every reopen fails because the device is gone: that is the reason the page settles on.
      await page
        .locator('[data-instrument="chem1"] .reason')
        .filter({ hasText: /^device not available: .*No such file or directory/ })
        .filter({ hasText: cable.device })
        .waitFor({ state: 'attached', timeout: LIVE_MS });
      const reason = await page.innerText('[data-instrument="chem1"] .reason');
      const health = (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')!;
      expect(health).toMatchObject({ state: 'waiting-for-device', reason });
      expect(await page.innerText('[data-instrument="chem1"] h3')).toContain('Waiting for device');
      expect(await page.getAttribute('[data-instrument="chem1"] [data-lamp]', 'data-lamp')).toBe('red');
      expect(await page.innerText('#summary')).toContain('Attention: chem1: waiting for device');
      expect(await page.evaluate('window.notReloaded')).toBe(true);
      console.log(`gateway-browser: unplugged chem1 shows "${reason}"`);
    },
  );

  it(
    'on a non-loopback address (0.0.0.0 with a tokenFile) refuses every page, JSON and action without the token, and works after login',
    { timeout: 30_000 },
    async () => {
      const { gateway, base } = await runningGateway('token', (dir) => {
        const tokenFile = join(dir, 'status-token');
        writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
        return { host: '0.0.0.0', tokenFile };
      });
      gateway.spawn();
      // /healthz needs the token too here, so readiness is asked with it as a bearer (what a scraper does).
      const bearer = { authorization: `Bearer ${TOKEN}` };
      await until(
        async () => {
          if (!gateway.running) throw new Error(`the gateway exited during start; see ${gateway.log}`);
          const res = await fetch(`${base}/healthz`, { headers: bearer }).catch(() => undefined);
          const body = (await res?.json().catch(() => undefined)) as { reasons: string[]; instruments: { state: string }[] } | undefined;
          return body !== undefined && !body.reasons.some((r) => r.startsWith('starting')) && body.instruments[0]?.state === 'connected';
        },
        15_000,
        'the protected gateway to be ready',
      );

      for (const path of ['/', '/fragment', '/status.json', '/status.js', '/healthz', '/metrics']) {
        const res = await fetch(base + path, { redirect: 'manual' });
        const body = await res.text();
        expect(res.status, path).toBe(401);
        expect(body, path).not.toContain('chem1');
      }
      const origin = { origin: base, 'content-type': 'application/x-www-form-urlencoded' };
      const form = 'sink=lims&all=1&id=1&choice=keep&csrf=guess';
      for (const path of ['/actions/retry-dead-letter', '/actions/resolve-conflict', '/actions/reprocess-capture', '/logout']) {
        for (const headers of [origin, { ...origin, ...bearer }, { ...origin, cookie: 'labgate_session=v1.AAAA.0.AAAA' }]) {
          const res = await fetch(base + path, { method: 'POST', headers, body: form, redirect: 'manual' });
          await res.arrayBuffer();
          expect([401, 403], `${path} ${Object.keys(headers).join(',')}`).toContain(res.status);
        }
      }

      const context = await browserContext();
      const page = await context.newPage();
      const refused = await page.goto(base + '/');
      expect(refused?.status()).toBe(401);
      expect(await page.content()).not.toContain('chem1');
      expect(await page.evaluate(async () => (await fetch('/status.json')).status)).toBe(401);
      await page.fill('#token', 'not-the-token-at-all');
      await page.click('button[type="submit"]');
      await live(page, '.flash-error');
      expect(await page.content()).not.toContain('chem1');

      await page.fill('#token', TOKEN);
      await page.click('button[type="submit"]');
      await live(page, '[data-instrument="chem1"].card-green');
      expect(await page.content()).not.toContain(TOKEN);
      expect(await context.cookies()).toEqual([expect.objectContaining({ name: 'labgate_session', httpOnly: true, sameSite: 'Strict' })]);
      expect(await page.evaluate(async () => (await fetch('/status.json')).json() as Promise<{ instruments: { id: string; state: string }[] }>)).toMatchObject({
        instruments: [{ id: 'chem1', state: 'connected' }],
      });
      // An action with the session and its CSRF token goes through (no dead letter to retry: the answer says so).
      const csrf = await page.getAttribute('header input[name="csrf"]', 'value');
      // fetch follows the 303 to the page, which shows the action's outcome once.
      const action = await page.evaluate(
        async (fields) => {
          const res = await fetch('/actions/retry-dead-letter', { method: 'POST', body: new URLSearchParams(fields) });
          return { status: res.status, redirected: res.redirected, page: await res.text() };
        },
        { csrf: csrf!, sink: 'lims', all: '1' },
      );
      expect(action).toMatchObject({ status: 200, redirected: true });
      expect(action.page).toContain('No such dead letter any more (someone may have retried it already).');
      // Logging out is an action too; afterwards the page is refused again.
      await page.click('header form button:has-text("Log out")');
      await live(page, '#token');
      expect((await page.goto(base + '/'))?.status()).toBe(401);
    },
  );
});

/** Audit rows of `action` in the gateway's store (read-only beside the running gateway). */
function auditOf(dir: string, action: string): { actor: string; subject: string }[] {
  const db = new Database(join(dir, 'data', 'labgate.db'), { readonly: true, timeout: 5_000 });
  try {
    return db.prepare('SELECT actor, subject FROM audit WHERE action = ? ORDER BY id').all(action) as { actor: string; subject: string }[];
  } finally {
    db.close();
  }
}
