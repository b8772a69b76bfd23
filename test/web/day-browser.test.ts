// The day at a glance and the onboarding aids in headless Chromium on the 800×480 touchscreen: the charts fit two to a
// row without sideways scrolling, their text is at least 11 pixels high, every hour has its bar; the detected settings,
// the codes seen and the reload banner read on the same screen. With LABGATE_SCREENSHOTS=1 it saves the onboarding
// walk-through's screenshots to docs/ (screenshots.ts; ordinary runs leave the tracked screenshots alone).
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeSharedBrowser, sharedBrowser } from './chromium.js';
import { startHarness, type Harness } from './harness.js';
import { dayState, onboardingState, reloadedState } from './scenes.js';
import { screenshot } from './screenshots.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(closeSharedBrowser);

async function touchscreen(scene: (h: Harness) => void): Promise<Page> {
  const h = await startHarness({ requireToken: false });
  cleanups.push(() => h.stop());
  scene(h);
  const context: BrowserContext = await (await sharedBrowser()).newContext({ viewport: { width: 800, height: 480 }, javaScriptEnabled: false });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  expect((await page.goto(h.base + '/'))?.status()).toBe(200);
  return page;
}

describe('the day at a glance on the 800×480 touchscreen', () => {
  it('draws a chart per instrument and per sink, two to a row, every hour a bar, readable without scrolling sideways', async () => {
    const page = await touchscreen(dayState);
    await page.locator('#day').scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(800);
    const boxes = await page
      .locator('#day svg.chart')
      .evaluateAll((svgs) => svgs.map((s) => s.getBoundingClientRect()).map((r) => ({ x: r.x, y: r.y, w: r.width })));
    expect(boxes).toHaveLength(4);
    for (const b of boxes) expect(b.w).toBeGreaterThan(340);
    expect(boxes[0]!.y).toBe(boxes[1]!.y); // side by side
    expect(await page.locator('[data-chart-instrument="chem1"] rect.bar:not(.bar-rejected)').count()).toBe(24);
    expect(await page.locator('[data-chart-instrument="chem1"] rect.bar-rejected').count()).toBe(1);
    expect(await page.getAttribute('[data-chart-sink="lims"] svg', 'aria-label')).toMatch(
      /^lims: [\d,]+ delivered in 24 hours; backlog now 3, at most [\d,]+$/,
    );
    expect(await page.locator('[data-chart-sink="lims"] path.backlog-line').count()).toBe(1);
    const tickHeights = await page.locator('#day svg.chart text.tick').evaluateAll((texts) => texts.map((t) => t.getBoundingClientRect().height));
    expect(Math.min(...tickHeights)).toBeGreaterThanOrEqual(11);
    await page.evaluate("document.querySelector('#day').scrollIntoView()");
    await screenshot(page, 'day-at-a-glance-touch.png');
  });

  it('shows the detected settings to copy and the codes that need a mapping', async () => {
    const page = await touchscreen(onboardingState);
    expect(await page.innerText('[data-instrument="chem2"] .finding')).toBe('ASTM at 9600 8N1: ENQ every 10 s');
    expect(await page.innerText('[data-instrument="chem2"] pre[data-yaml]')).toBe(
      'driver: astm\ntransport:\n  kind: serial\n  path: "/dev/labgate/port3"\n  baudRate: 9600\n  dataBits: 8\n  parity: none',
    );
    expect(await page.innerText('pre[data-mapping-lines="urine1"]')).toBe(
      '- { code: "PRO", loinc: "", unit: "mg/dL" }\n- { code: "UBG", loinc: "", unit: "mg/dL" }',
    );
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(800);
    await page.evaluate("document.querySelector('#instrument-chem2').scrollIntoView()");
    await screenshot(page, 'onboarding-touch.png');
    await page.evaluate("document.querySelector('#codes-seen').scrollIntoView()");
    await screenshot(page, 'codes-seen-touch.png');
  });

  it('says on top of the page that the reload was applied, with the restarted instrument connected and its first result in', async () => {
    const page = await touchscreen(reloadedState);
    const banner = await page.locator('#reload').boundingBox();
    expect(banner!.y + banner!.height, 'the banner is on the first screen').toBeLessThanOrEqual(480);
    expect(await page.innerText('#reload')).toMatch(
      /^Configuration reloaded 1 min ago: chem2 restarted \(transport changed\); urine1: the new mapping from its next message\.$/,
    );
    expect(await page.getAttribute('#reload', 'data-reload')).toBe('applied');
    expect(await page.getAttribute('[data-instrument="chem2"] [data-lamp]', 'data-lamp')).toBe('green');
    expect(await page.locator('[data-instrument="chem2"] .finding').count(), 'detection is over').toBe(0);
    expect(await page.locator('#results tr', { hasText: 'A26-0112' }).count()).toBe(2);
    expect(await page.locator('pre[data-mapping-lines="urine1"]').count(), 'no code needs a mapping').toBe(0);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(800);
    await screenshot(page, 'reload-touch.png');
  });
});
