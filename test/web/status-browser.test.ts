// The status page in headless Chromium (Debian's chromium via playwright-core): it shows instruments and results,
// follows the source live without a reload, retries a dead letter from the page, works without JavaScript, and
// refuses everything on a protected listener without the token. With LABGATE_SCREENSHOTS=1 it saves the
// screenshots of README.md and docs/operating.md to docs/ (screenshots.ts).
// These tests fail, never skip, when Chromium is missing: CI must install it (`apt-get install chromium`).
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeSharedBrowser, sharedBrowser } from './chromium.js';
import { startHarness, TOKEN, type Harness } from './harness.js';
import { errorState, healthyState } from './scenes.js';
import { screenshot } from './screenshots.js';

const harnesses: Harness[] = [];
const contexts: BrowserContext[] = [];

afterAll(closeSharedBrowser);
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
  for (const h of harnesses.splice(0)) await h.stop();
});

async function newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await (await sharedBrowser()).newContext(options);
  contexts.push(context);
  return context;
}

async function start(requireToken: boolean): Promise<Harness> {
  const h = await startHarness({ requireToken });
  harnesses.push(h);
  return h;
}

async function open(h: Harness, viewport = { width: 1280, height: 900 }, javaScriptEnabled = true): Promise<Page> {
  const context = await newContext({ viewport, javaScriptEnabled });
  const page = await context.newPage();
  const reply = await page.goto(h.base + '/');
  expect(reply?.status()).toBe(200);
  return page;
}

/** Waits until `selector` exists in the page (the live update arrived). */
async function until(page: Page, selector: string): Promise<void> {
  await page.waitForSelector(selector, { timeout: 10_000, state: 'attached' });
}

describe('status page in Chromium', () => {
  it('shows instruments and results, then follows the source live: an error turns red with its reason, a new result appears', async () => {
    const h = await start(false);
    healthyState(h);
    const page = await open(h);
    expect(await page.getAttribute('[data-instrument="chem1"] [data-lamp]', 'data-lamp')).toBe('green');
    expect(await page.innerText('#results')).toContain('A26-0001');
    await screenshot(page, 'status-page.png', { fullPage: true });
    await page.evaluate('window.notReloaded = true');

    const chem1 = h.source.state.instruments.find((i) => i.id === 'chem1')!;
    Object.assign(chem1, { state: 'error', reason: 'EIO: input/output error (cable unplugged?)', since: h.clock.now });
    h.source.addResult('A26-0099', { instrumentId: 'hema1', loinc: '718-7', analyzerCode: 'HGB', valueText: '13.9', unit: 'g/dL' });
    await until(page, '[data-instrument="chem1"].card-red');
    expect(await page.innerText('[data-instrument="chem1"] .reason')).toBe('EIO: input/output error (cable unplugged?)');
    await until(page, '#results tr[data-key="key-A26-0099"]');
    expect(await page.getAttribute('#summary [data-lamp]', 'data-lamp')).toBe('red');
    await screenshot(page, 'status-page-unplugged.png');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
  });

  it('retries a dead letter from the page; the result then shows delivered', async () => {
    const h = await start(false);
    healthyState(h);
    const result = h.source.addResult('A26-0042');
    h.source.setDelivery(result.dedupKey, 'postgres', 'sent');
    h.source.setDelivery(result.dedupKey, 'lims', 'dead');
    h.source.state.deadLetters.push({
      sink: 'lims',
      dedupKey: result.dedupKey,
      accession: 'A26-0042',
      loinc: '2823-3',
      reason: '422 unknown test code',
      attempts: 1,
      failedAt: h.clock.now,
    });
    const page = await open(h);
    await page.click('[data-dead-letter="key-A26-0042"] button');
    await until(page, '.flash');
    expect(await page.innerText('.flash')).toBe('1 dead letter for lims queued again.');
    expect(h.source.audit).toEqual([{ at: h.clock.now, actor: 'web-local', action: 'dead-letter-retry', subject: 'key-A26-0042' }]);
    expect(await page.innerText('#dead-letters')).toContain('No dead letters.');
    h.source.setDelivery(result.dedupKey, 'lims', 'sent'); // the drain delivered it
    await until(page, 'tr[data-key="key-A26-0042"] .delivery-sent[data-sink="lims"]');
  });

  it('is readable and actionable without JavaScript, and fits a 7-inch touchscreen', async () => {
    const h = await start(false);
    errorState(h);
    const page = await open(h, { width: 800, height: 480 }, false);
    expect(await page.innerText('[data-instrument="urine1"] .reason')).toContain('device not available');
    await screenshot(page, 'status-page-touch.png');
    const width = await page.evaluate('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(800);
    await page.click('[data-conflict="3"] button:has-text("Keep stored")');
    await until(page, '.flash');
    expect(await page.innerText('.flash')).toBe('Conflict 3: stored version kept.');
    expect(h.source.audit.map((a) => a.action)).toEqual(['conflict-kept']);
  });

  it('shows the trouble state, and asks before forwarding a conflict as a correction', async () => {
    const h = await start(false);
    errorState(h);
    const page = await open(h);
    expect(await page.getAttribute('[data-sink="lims"] [data-lamp]', 'data-lamp')).toBe('red');
    expect(await page.locator('[data-conflict="3"] tr.differs').count()).toBe(1);
    await screenshot(page, 'status-page-error.png', { fullPage: true });

    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.click('[data-conflict="3"] button:has-text("Forward new as correction")');
    expect(h.source.audit).toEqual([]);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('[data-conflict="3"] button:has-text("Forward new as correction")');
    await until(page, '.flash');
    expect(await page.innerText('.flash')).toBe('Conflict 3: new version forwarded as a correction.');
    expect(h.source.audit.map((a) => a.action)).toEqual(['conflict-forwarded']);
  });

  it('on a protected listener refuses every page and action without the token, then works after login', async () => {
    const h = await start(true);
    errorState(h);
    const context = await newContext();
    const page = await context.newPage();
    for (const path of ['/', '/status.json', '/fragment', '/healthz', '/metrics']) {
      const reply = await page.goto(h.base + path);
      expect(reply?.status(), path).toBe(401);
      expect(await page.content()).not.toContain('urine1');
    }
    await page.goto(h.base + '/');
    const statuses = await page.evaluate(async () => {
      const paths = ['/actions/retry-dead-letter', '/actions/resolve-conflict', '/actions/reprocess-capture'];
      const body = 'sink=lims&all=1&id=3&choice=keep';
      const headers = { 'content-type': 'application/x-www-form-urlencoded' };
      return Promise.all(paths.map(async (p) => (await fetch(p, { method: 'POST', body, headers })).status));
    });
    expect(statuses).toEqual([401, 401, 401]);
    expect(h.source.audit).toEqual([]);

    await page.fill('#token', TOKEN);
    await page.click('button[type="submit"]');
    await until(page, '[data-instrument="urine1"]');
    expect(await page.content()).not.toContain(TOKEN);
    const cookies = await context.cookies();
    expect(cookies).toEqual([expect.objectContaining({ name: 'labgate_session', httpOnly: true, sameSite: 'Strict' })]);
    await page.click('[data-capture="12"] button');
    await until(page, '.flash');
    expect(await page.innerText('.flash')).toBe('Capture 12 reprocessed: accepted.');
    expect(h.source.audit[0]?.actor).toMatch(/^web:[0-9a-f]{8}$/);
  });
});
