import { existsSync } from 'node:fs';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';

// Debian's packages; the tests and the bench never download a browser.
const debianChromium = '/usr/bin/chromium';
const debianHeadlessShell = '/usr/bin/chromium-headless-shell';

/**
 * The tests' browser: Debian's chromium-headless-shell (the same engine without the desktop
 * browser around it, which Playwright prefers for headless runs) when installed, as it costs
 * a fifth less CPU; else Chromium. HEARTH_CHROMIUM overrides both.
 */
export const chromiumPath = process.env.HEARTH_CHROMIUM ?? (existsSync(debianHeadlessShell) ? debianHeadlessShell : debianChromium);
export const browserAvailable = existsSync(chromiumPath);

/**
 * Debian's full Chromium (or HEARTH_CHROMIUM): the browser a person runs, which the bench measures, and
 * the one for the tests of browser notifications: the headless shell has none (Notification.permission
 * is always "denied" there).
 */
export const fullChromiumPath = process.env.HEARTH_CHROMIUM ?? debianChromium;

// Without the background-networking flags Chromium keeps dialling Google's hosts, which this closed network refuses.
// The headless shell takes the same flags (--headless is its only mode); Playwright adds its own defaults to them.
export const launchArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export const chromiumMissing = `Chromium not found at ${chromiumPath}; install it with "apt-get install -y chromium-headless-shell" (or chromium; HEARTH_REQUIRE_BROWSER=1 makes this a failure).`;

export function launchOptions(executablePath = chromiumPath, extraArgs: string[] = []): LaunchOptions {
  return { executablePath, headless: true, args: [...launchArgs, ...extraArgs] };
}

/** `extraArgs`: switches of this browser's own, such as a fake microphone's. */
export async function launchBrowser(executablePath = chromiumPath, extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}; install it with "apt-get install -y chromium".`);
  return chromium.launch(launchOptions(executablePath, extraArgs));
}

/** The run's one Chromium (test/support/chromium-server-setup.ts): where to connect, or why there is none. */
export type SharedChromium = { wsEndpoint: string } | { unavailable: true } | { error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    sharedChromium: SharedChromium;
  }
}
