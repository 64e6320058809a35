import { existsSync } from 'node:fs';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';

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

export const chromiumMissing = `Chromium not found at ${chromiumPath}; install it with "apt-get install -y chromium" (HEARTH_REQUIRE_BROWSER=1 makes this a failure).`;

export function launchOptions(): LaunchOptions {
  return { executablePath: chromiumPath, headless: true, args: launchArgs };
}

export async function launchBrowser(): Promise<Browser> {
  if (!browserAvailable) throw new Error(chromiumMissing);
  return chromium.launch(launchOptions());
}

/** The run's one Chromium (test/support/chromium-server-setup.ts): where to connect, or why there is none. */
export type SharedChromium = { wsEndpoint: string } | { unavailable: true } | { error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    sharedChromium: SharedChromium;
  }
}
