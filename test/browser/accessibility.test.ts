/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { expectNoViolations } from '../support/axe.ts';
import { inBothSchemes, type ColorScheme } from '../support/color-scheme.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { sel, sendMessage, skipBrowserTests, useBrowser, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';

const viewports = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

const panels = ['Context', 'Files', 'Tools', 'Models', 'Memory', 'Integrations', 'Schedules'] as const;

/** A session holding an answered tool call, a code block, and a call waiting for approval. */
async function conversation(hearth: Hearth, page: Page): Promise<void> {
  hearth.llm.script(
    { thinking: 'Checking the disks first.', toolCalls: [{ name: 'todo', arguments: { action: 'set', items: ['Check disks'] } }] },
    { content: '## Disks\n\nAll **fine**. Check again with:\n\n```bash\nfor disk in /dev/sd?; do smartctl -H "$disk"; done\n```\n\n> Last checked today.\n\n| disk | state |\n|---|---|\n| sda | ok |' },
    { toolCalls: [{ name: 'terminal', arguments: { command: 'touch checked.txt' } }] },
    { content: 'Done.' },
  );
  await sendMessage(page, 'Are my disks healthy?');
  await page.waitForFunction((selector) => [...document.querySelectorAll(selector)].some((item) => (item.textContent ?? '').includes('Last checked today')), sel.assistant);
  await page.locator(`${sel.assistant} pre code.hljs`).waitFor();
  await waitForIdle(page);
  await sendMessage(page, 'Note that you checked');
  await page.locator(`${sel.tool}[data-tool="terminal"] ${sel.approval} ${sel.allowOnce}`).waitFor();
}

describe.skipIf(skipBrowserTests)('accessibility (axe-core, WCAG 2.1 A and AA) in the browser', () => {
  const browser = useBrowser();

  // One page a device: the scenes (a conversation, the panels, the notifications) do not depend on the
  // colour scheme, so each is reached once and checked in both schemes in that page; the desktop
  // loads in light, the phone in dark.
  for (const [device, viewport] of Object.entries(viewports)) {
    const loadedIn: ColorScheme = device === 'desktop' ? 'light' : 'dark';
    const expectNoViolationsInBothSchemes = (page: Page, scene: string) =>
      inBothSchemes(page, loadedIn, (colorScheme) => expectNoViolations(page, `${device} ${colorScheme}, ${scene}`));

    it(`finds nothing on the ${device} (light and dark): empty state, a conversation with tool cards and an approval, every panel, the notifications`, { timeout: 120_000 }, async () => {
      const hearth = await browser.hearth();
      const page = await browser.openPage(hearth, { viewport, colorScheme: loadedIn });
      await waitForApp(page);
      await page.locator('#transcript .profile-card').first().waitFor();
      await page.locator('.session-header .backend-status:not([data-state="unknown"])').waitFor();
      await expectNoViolationsInBothSchemes(page, 'empty state');

      const sessionId = await hearth.createSession('server_admin');
      await page.evaluate((id) => (location.hash = id), sessionId);
      await waitForHeaderProfile(page, 'Server Administrator');
      await conversation(hearth, page);
      await expectNoViolationsInBothSchemes(page, 'conversation with an approval waiting');

      for (const panel of panels) {
        await page.locator(`header button.panel-toggle[aria-label="${panel}"]`).click();
        const aside = page.locator(`aside.panel[aria-label="${panel}"]`);
        await aside.waitFor({ state: 'visible' });
        // Each panel fetches its content when opened; its heading shows once it is drawn.
        await aside.locator('h2').first().waitFor();
        await page.waitForFunction((selector) => !document.querySelector(selector)?.querySelector('[data-state="loading"], .loading'), `aside.panel[aria-label="${panel}"]`);
        await expectNoViolationsInBothSchemes(page, `${panel} panel`);
        await page.locator(`header button.panel-toggle[aria-label="${panel}"]`).click();
        await aside.waitFor({ state: 'hidden' });
      }

      await hearth.deps.notifications.raise({ title: 'Backup finished', body: '**All** disks copied.', sessionId });
      await page.locator('#notification-bell').click();
      await page.locator('#notification-popover .notification-list li').first().waitFor();
      await expectNoViolationsInBothSchemes(page, 'notifications');
      await page.keyboard.press('Escape');

      if (device === 'phone') {
        await page.locator(sel.openSessions).click();
        await page.locator(sel.sessionItem).first().waitFor();
        await page.waitForFunction(() => getComputedStyle(document.querySelector('#sidebar')!).transform === 'none');
        await expectNoViolationsInBothSchemes(page, 'sessions drawer');
      }
    });
  }
});
