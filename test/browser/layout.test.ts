/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Hearth } from '../support/hearth-server.ts';
import { browserTest, onScreen, screenshot, sel, skipBrowserTests, useBrowser, waitForApp, waitForHeaderProfile } from '../support/browser.ts';

const phone = { width: 390, height: 844 };
const desktop = { width: 1280, height: 800 };

const richAnswer = [
  '## Backup status',
  '',
  'All **three** disks are healthy. Run this to check again:',
  '',
  '```bash',
  'for disk in /dev/sd?; do smartctl -H "$disk"; done',
  '```',
  '',
  '- `/dev/sda`: passed',
  '- `/dev/sdb`: passed',
  '- `/dev/sdc`: passed',
].join('\n');

/** Two sessions; the open one holds a short conversation with a tool card and a code block. */
async function seed(hearth: Hearth): Promise<{ open: string; other: string }> {
  const other = await hearth.createSession('smart_home');
  // Listed only once it has a message (the list shows no empty session).
  expect((await hearth.request('POST', `/sessions/${other}/messages`, { content: 'Lights on' })).status).toBe(200);
  await hearth.request('PATCH', `/sessions/${other}`, { title: 'Living room lights' });
  const open = await hearth.createSession('server_admin');
  hearth.llm.script({ toolCalls: [{ name: 'todo', arguments: { action: 'set', items: ['Check disks'] } }] }, { content: richAnswer });
  const { status } = await hearth.request('POST', `/sessions/${open}/messages`, { content: 'Are my backup disks healthy?' });
  expect(status).toBe(200);
  return { open, other };
}

async function openOn(browser: ReturnType<typeof useBrowser>, hearth: Hearth, hash: string, viewport: typeof phone, colorScheme: 'light' | 'dark'): Promise<Page> {
  const page = await browser.openPage(hearth, { hash, viewport, colorScheme });
  await waitForApp(page);
  await page.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? '').includes('/dev/sdc: passed'), sel.assistant);
  await page.locator(`${sel.assistant} pre code.hljs`).waitFor();
  return page;
}

describe.skipIf(skipBrowserTests)('layout in the browser', () => {
  const browser = useBrowser();

  for (const colorScheme of ['light', 'dark'] as const) {
    it(`on a phone (${colorScheme}) hides the sessions behind "Open sessions" and opens them as a drawer`, browserTest, async () => {
      const hearth = await browser.hearth();
      const { open, other } = await seed(hearth);
      const page = await openOn(browser, hearth, open, phone, colorScheme);

      const toggle = page.locator(sel.openSessions);
      expect(await toggle.isVisible()).toBe(true);
      expect(await onScreen(page.locator(sel.sessionList))).toBe(false);
      expect(await onScreen(page.locator(sel.message))).toBe(true);
      await screenshot(page, `phone-${colorScheme}-chat`);
      // Nothing sticks out sideways on a narrow screen, and the header still shows the session's title.
      expect.soft(await page.evaluate(() => document.documentElement.scrollWidth), 'page width on a phone').toBeLessThanOrEqual(phone.width);
      expect.soft(await onScreen(page.locator(sel.sessionTitle)), 'the #session-title header is visible on a phone').toBe(true);

      await toggle.click();
      await page.waitForFunction((selector) => {
        const list = document.querySelector(selector);
        if (!list) return false;
        const box = list.getBoundingClientRect();
        return box.width > 0 && box.left >= 0 && box.right <= window.innerWidth + 1;
      }, sel.sessionList);
      expect(await onScreen(page.locator(sel.sessionList))).toBe(true);
      expect(await onScreen(page.locator(`${sel.sessionItem}[data-session-id="${other}"]`))).toBe(true);
      expect(await onScreen(page.locator(sel.newSession))).toBe(true);
      await screenshot(page, `phone-${colorScheme}-sessions-open`);
      expect.soft(await page.evaluate(() => document.documentElement.scrollWidth), 'page width with the drawer open').toBeLessThanOrEqual(phone.width);

      // Choosing a session closes the drawer and opens it.
      await page.locator(`${sel.sessionItem}[data-session-id="${other}"] .session-link`).click();
      await page.waitForFunction((id) => location.hash === `#${id}`, other);
      await page.waitForFunction((selector) => {
        const list = document.querySelector(selector);
        if (!list) return true;
        const box = list.getBoundingClientRect();
        const style = getComputedStyle(list);
        return box.width === 0 || box.right <= 0 || box.left >= window.innerWidth || style.visibility === 'hidden';
      }, sel.sessionList);
      expect(await onScreen(page.locator(sel.sessionList))).toBe(false);
      await page.waitForFunction((selector) => document.querySelector(selector)?.textContent?.includes('Living room lights'), sel.sessionTitle);

      // "Close sessions" closes it too.
      await toggle.click();
      const close = page.locator(sel.closeSessions);
      await close.waitFor({ state: 'visible' });
      await close.click();
      await page.waitForFunction((selector) => {
        const list = document.querySelector(selector);
        if (!list) return true;
        const box = list.getBoundingClientRect();
        return box.width === 0 || box.right <= 0 || box.left >= window.innerWidth || getComputedStyle(list).visibility === 'hidden';
      }, sel.sessionList);
    });

    it(`on a desktop (${colorScheme}) shows the sidebar beside the conversation`, browserTest, async () => {
      const hearth = await browser.hearth();
      const { open, other } = await seed(hearth);
      const page = await openOn(browser, hearth, open, desktop, colorScheme);
      expect(await page.locator(sel.openSessions).isVisible()).toBe(false);
      expect(await onScreen(page.locator(`${sel.sessionItem}[data-session-id="${other}"]`))).toBe(true);
      expect(await onScreen(page.locator(sel.transcript))).toBe(true);
      await page.locator(`${sel.tool}[data-tool="todo"][data-status="done"]`).waitFor();
      await waitForHeaderProfile(page, 'Server Administrator');
      await screenshot(page, `desktop-${colorScheme}-chat`);
    });
  }
});
