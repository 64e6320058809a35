/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { describe, expect, it } from 'vitest';
import { browserTest, screenshot, sel, skipBrowserTests, useBrowser, waitForApp, waitForHeaderProfile } from '../support/browser.ts';
import { checkHeader, headerViewports, measureHeader } from '../support/header-layout.ts';

const title = 'Plan the garden renovation for the spring';

describe.skipIf(skipBrowserTests)('the session header in the browser', () => {
  const browser = useBrowser();

  for (const viewport of headerViewports) {
    it(`at ${viewport.width} px keeps the title readable and the controls in one row, also with a panel open`, browserTest, async () => {
      const hearth = await browser.hearth();
      const sessionId = await hearth.createSession('server_admin');
      expect((await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' })).status).toBe(200);
      await hearth.request('PATCH', `/sessions/${sessionId}`, { title });
      const page = await browser.openPage(hearth, { hash: sessionId, viewport });
      await waitForApp(page);
      await page.waitForFunction((selector) => document.querySelector(selector)?.textContent === 'Plan the garden renovation for the spring', sel.sessionTitle);
      await waitForHeaderProfile(page, 'Server Administrator');
      await page.locator('.session-header .backend-status:not([data-state="unknown"])').waitFor();

      const closed = await measureHeader(page);
      checkHeader(closed, viewport.width, 'no panel open');
      await screenshot(page, `header-${viewport.width}`);

      for (const panel of ['Tools', 'Integrations', 'Schedules']) {
        await page.locator(`header button.panel-toggle[aria-label="${panel}"]`).click();
        await page.locator(`aside.panel[aria-label="${panel}"]`).waitFor({ state: 'visible' });
        const open = await measureHeader(page);
        checkHeader(open, viewport.width, `${panel} open`);
        // Opening a panel leaves the header as it was: same height, nothing moved onto another row.
        expect(open.header.height, `header height with ${panel} open at ${viewport.width} px`).toBeCloseTo(closed.header.height, 0);
        if (panel === 'Tools') await screenshot(page, `header-${viewport.width}-panel-open`);
        await page.locator(`header button.panel-toggle[aria-label="${panel}"]`).click();
        await page.locator(`aside.panel[aria-label="${panel}"]`).waitFor({ state: 'hidden' });
      }
    });
  }
});
