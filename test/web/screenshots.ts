// The screenshots of README.md and docs/, kept in docs/. Every run renders the pages in Chromium and asserts on them;
// the images are written only when asked (LABGATE_SCREENSHOTS=1, which `npm run screenshots` sets), so `npm test`
// never rewrites tracked files.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

/** True when this run writes docs/*.png. */
export const writingScreenshots = process.env.LABGATE_SCREENSHOTS === '1';

/** Saves docs/`name` when screenshots are asked for. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (!writingScreenshots) return;
  mkdirSync(DOCS, { recursive: true });
  await page.screenshot({ path: `${DOCS}${name}`, ...options });
}
