/// <reference lib="dom" />
// A page whose sign-in ends elsewhere (signed out everywhere from another device) learns it from
// its sockets' 4001 at once: it shows the sign-in without knocking again with what ended, and opens
// where it was once the person signs in again.
import { describe, it } from 'vitest';
import { sel, skipBrowserTests, useBrowser, waitForApp, waitForEventsSocket, waitForSessionSynced } from '../support/browser.ts';
import { household } from '../support/people.ts';

describe.skipIf(skipBrowserTests)('a page signed out elsewhere', () => {
  const browser = useBrowser();

  it('shows the sign-in at once and opens the session again after it', { timeout: 60_000 }, async () => {
    const hearth = await browser.hearth();
    const { people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const sessionId = await adult.createSession();
    // The page's own sign-in, through its form; `adult.cookieHeaders` is another device's.
    const page = await browser.openPage(hearth, { hash: sessionId, allowErrors: [/\b401\b/] });
    const form = page.locator(sel.signIn);
    const signIn = async () => {
      await form.waitFor({ state: 'visible' });
      await form.getByLabel('Name').fill(adult.person.name);
      await form.getByLabel('Passphrase').fill(adult.passphrase);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await form.waitFor({ state: 'hidden' });
      await waitForApp(page);
    };
    await signIn();
    // Both sockets open before the sign-out ends: one still opening would be refused (a 401 upgrade), which is the drop this test is not about.
    await waitForEventsSocket(page);
    await waitForSessionSynced(page, sessionId);

    await adult.request('POST', '/auth/sign-out', { everywhere: true });
    await signIn();
    await page.waitForFunction((id) => decodeURIComponent(location.hash.slice(1)) === id, sessionId);
  });
});
