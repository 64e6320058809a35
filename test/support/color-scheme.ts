/// <reference lib="dom" />
// The page takes its colours from prefers-color-scheme in CSS alone (public/styles/app.css and the
// highlight style sheets' media), so one page load can be checked in both schemes by switching the
// emulated preference: a page load costs far more than the switch.
import type { Page } from 'playwright-core';

export type ColorScheme = 'light' | 'dark';

export const otherScheme = (scheme: ColorScheme): ColorScheme => (scheme === 'light' ? 'dark' : 'light');

/** Switches the page's emulated colour scheme and waits until its media queries answer to it. */
export async function setColorScheme(page: Page, scheme: ColorScheme): Promise<void> {
  await page.emulateMedia({ colorScheme: scheme });
  await page.waitForFunction((dark) => matchMedia('(prefers-color-scheme: dark)').matches === dark, scheme === 'dark');
}

/** Runs `check` in the scheme the page is in (`current`), then in the other, and leaves the page in `current`. */
export async function inBothSchemes(page: Page, current: ColorScheme, check: (scheme: ColorScheme) => Promise<void>): Promise<void> {
  await check(current);
  await setColorScheme(page, otherScheme(current));
  await check(otherScheme(current));
  await setColorScheme(page, current);
}
