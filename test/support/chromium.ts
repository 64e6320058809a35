import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium; the tests and the bench never download one. */
export const chromiumPath = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';
export const browserAvailable = existsSync(chromiumPath);

// Without the background-networking flags Chromium keeps dialling Google's hosts, which this closed network refuses.
export const launchArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export async function launchBrowser(): Promise<Browser> {
  if (!browserAvailable) {
    throw new Error(`Chromium not found at ${chromiumPath}; install it with "apt-get install -y chromium" (HEARTH_REQUIRE_BROWSER=1 makes this a failure).`);
  }
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: launchArgs });
}
