import { chromium } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { browserTest, sel, sendMessage, skipBrowserTests, waitForAnswer, waitForApp, waitForEventsSocket } from '../support/browser.ts';
import { caddyAvailable, caddyRequired, startCaddy } from '../support/caddy.ts';
import { fullChromiumPath, launchArgs } from '../support/chromium.ts';
import { useHearth } from '../support/hearth-server.ts';
import { spkiHash } from '../support/tls-certificates.ts';

// docs/operations.md, HTTPS for the phone: the page through Debian's Caddy (`tls internal`) in a
// Chromium that trusts Caddy's authority, as a phone that was given it would. Chromium is told to
// accept certificates whose chain holds the key of Caddy's intermediate
// (--ignore-certificate-errors-spki-list): it matches only certificates the server presents, and
// Caddy presents its leaf and intermediate, never the root, so pinning the root is not enough
// (ERR_CERT_AUTHORITY_INVALID). Playwright's ignoreHTTPSErrors would prove nothing here: Chromium
// calls an https page a secure context even when its certificate was not trusted at all.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = useHearth();
const token = 'token-of-the-proxy-recipe';

describe.skipIf(skipBrowserTests || (!caddyAvailable && !caddyRequired))('the page through Caddy', () => {
  it('is a secure context over HTTPS; its sockets connect and an answer streams in', browserTest, async () => {
    const hearth = await start({ env: { AUTH_TOKEN: token } });
    const caddy = await startCaddy(`127.0.0.1:${new URL(hearth.baseUrl).port}`);
    cleanups.push(() => caddy.close());
    // The full Chromium: the page offers browser notifications in a secure context, and the headless shell has none.
    const browser = await chromium.launch({
      executablePath: fullChromiumPath,
      headless: true,
      args: [...launchArgs, `--ignore-certificate-errors-spki-list=${spkiHash(caddy.intermediatePem)}`],
    });
    cleanups.push(() => browser.close());
    const context = await browser.newContext();
    // What the sign-in form stores after the person types the token once (public/app/login.js).
    await context.addCookies([{ name: 'token', value: token, domain: 'localhost', path: '/', secure: true, sameSite: 'Strict' }]);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });

    const { body } = await hearth.request('POST', '/sessions', {}, { authorization: `Bearer ${token}` });
    await page.goto(`${caddy.url}/#${body.session_id}`);
    expect(await page.evaluate(() => ({ secure: window.isSecureContext, protocol: location.protocol }))).toEqual({ secure: true, protocol: 'https:' });
    await waitForApp(page);
    // The events socket said hello (wss:// through Caddy).
    await waitForEventsSocket(page);

    // The session's socket: a message goes out and the answer streams back.
    const chunks = ['Safe ', 'and ', 'sound ', 'over ', 'HTTPS.'];
    hearth.llm.script({ chunks, delayMs: 50 });
    await sendMessage(page, 'Can you hear me from the phone?');
    await page.locator(sel.user).filter({ hasText: 'Can you hear me from the phone?' }).waitFor();
    await waitForAnswer(page, chunks.join(''));

    // A secure context is offered browser notifications, not told it needs HTTPS.
    await page.locator('header button.notification-bell').click();
    await page.locator('#notification-popover button.allow-notifications').waitFor();
    expect(await page.locator('#notification-popover [data-reason="needs-https"]').count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
