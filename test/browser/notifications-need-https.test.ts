import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTest, skipBrowserTests, waitForApp, waitForEventsSocket } from '../support/browser.ts';
import { fullChromiumPath, launchArgs } from '../support/chromium.ts';
import { useHearth } from '../support/hearth-server.ts';

// Chromium counts http://localhost and all of 127.0.0.0/8 as secure contexts, so the page is
// opened by a name that is not: hearth.test, which this browser resolves to 127.0.0.1, as a phone
// reaches a LAN address over plain HTTP. Hearth needs AUTH_TOKEN to answer another name.

const start = useHearth();
const token = 'token-of-the-household';
const lanName = 'hearth.test';
let browser: Browser;
const untrustworthyOriginNote = /^The Cross-Origin-Opener-Policy header has been ignored, because the URL's origin was untrustworthy\./;

beforeAll(async () => {
  if (skipBrowserTests) return;
  // The full Chromium: the headless shell has no browser notifications (Notification.permission is always "denied").
  browser = await chromium.launch({ executablePath: fullChromiumPath, headless: true, args: [...launchArgs, `--host-resolver-rules=MAP ${lanName} 127.0.0.1`] });
}, 60_000);
afterAll(() => browser?.close());

/** The page at `http://<host>:<port>/`, signed in with the token cookie the sign-in form would have stored; its errors are collected. */
async function openAt(host: string, port: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext();
  await context.addCookies([{ name: 'token', value: token, domain: host, path: '/', sameSite: 'Strict' }]);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    // Chromium's own note on every untrustworthy origin, about helmet's Cross-Origin-Opener-Policy header.
    if (message.type() === 'error' && !untrustworthyOriginNote.test(message.text())) errors.push(message.text());
  });
  await page.goto(`http://${host}:${port}/`);
  await waitForApp(page);
  await waitForEventsSocket(page);
  return { page, errors };
}

async function bellPermissionLine(page: Page) {
  await page.locator('header button.notification-bell').click();
  const popover = page.locator('#notification-popover');
  await popover.waitFor({ state: 'visible' });
  return popover.locator('.notification-permission');
}

describe.skipIf(skipBrowserTests)('the bell on a page that is not a secure context', () => {
  it('says browser notifications need HTTPS and links to the section that sets it up', browserTest, async () => {
    const hearth = await start({ env: { AUTH_TOKEN: token, HOST: '127.0.0.1' } });
    const port = new URL(hearth.baseUrl).port;
    const { page, errors } = await openAt(lanName, port);
    try {
      expect(await page.evaluate(() => window.isSecureContext)).toBe(false);
      const line = await bellPermissionLine(page);
      await line.waitFor();
      expect(await line.textContent()).toBe('Browser notifications need HTTPS. How to reach Hearth over HTTPS');
      expect(await line.getAttribute('data-reason')).toBe('needs-https');
      expect(await page.locator('#notification-popover button.allow-notifications').count()).toBe(0);
      const link = line.locator('a');
      expect(await link.getAttribute('href')).toBe('/docs/operations.md#https-for-the-phone');

      // The link opens the section on the same device, from Hearth itself.
      const [help] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
      await help.waitForLoadState();
      expect(help.url()).toBe(`http://${lanName}:${port}/docs/operations.md#https-for-the-phone`);
      expect(await help.locator('body').textContent()).toMatch(/^## HTTPS for the phone$/m);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });

  it('offers browser notifications as before where the page is a secure context (http://localhost)', browserTest, async () => {
    const hearth = await start({ env: { AUTH_TOKEN: token } });
    const { page, errors } = await openAt('localhost', new URL(hearth.baseUrl).port);
    try {
      expect(await page.evaluate(() => window.isSecureContext)).toBe(true);
      const line = await bellPermissionLine(page);
      await line.locator('button.allow-notifications').waitFor();
      expect(await line.getAttribute('data-reason')).toBeNull();
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});
