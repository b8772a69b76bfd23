// Debian's Chromium driven by playwright-core, for every browser test (also the end-to-end one against a running
// gateway). A missing browser throws, so tests fail instead of skipping: CI installs it (`apt-get install chromium`).
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

// Overridable only so a test run can prove that a missing browser fails the suite.
const CHROMIUM = process.env.LABGATE_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let launched: Promise<Browser> | undefined;

/** The shared browser, launched on first use; rejects when Chromium is not installed. */
export function sharedBrowser(): Promise<Browser> {
  launched ??= (async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
    return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  })();
  return launched;
}

/** Closes the shared browser if it was launched (call from afterAll). */
export async function closeSharedBrowser(): Promise<void> {
  const browser = await launched?.catch(() => undefined);
  launched = undefined;
  await browser?.close();
}
