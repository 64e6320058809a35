/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The third hour (issue 35), the transcript's part: the view follows the conversation after a
// failed tool call opened its result; scrolled up on purpose, the person stays where they are and
// a *Jump to latest* button counts what arrived; a message sent right after *New session*, before
// the new session's socket is open, arrives exactly once; and the small things of the list.
import type { Locator, Page, WebSocketRoute } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { toolFailure } from '../../src/failure.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { expectNoViolations } from '../support/axe.ts';
import { browserTest, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';
import type { Hearth } from '../support/hearth-server.ts';

const viewports = [
  { name: 'phone', width: 390, height: 844, colorScheme: 'dark' },
  { name: 'desktop', width: 1366, height: 900, colorScheme: 'light' },
] as const;

/** Twelve lines of a failed disk check: its Result opens on the card, some 200 px of text. */
const diskFailure = Array.from({ length: 12 }, (_, index) => `sd${String.fromCharCode(97 + index)}: SMART read failed (error ${index + 1})`).join('\n');

/** Tools of the test's profile: one that fails with a long output, one that waits until the test lets it finish. */
function checkerTools(release: Promise<void>): Tool[] {
  return [
    {
      name: 'check_disks',
      description: 'Checks the disks.',
      parameters: { type: 'object', properties: {} },
      execute: async () => toolFailure(diskFailure),
    },
    {
      name: 'slow_inventory',
      description: 'Lists what is stored, slowly.',
      parameters: { type: 'object', properties: {} },
      timeoutMs: 60_000,
      execute: async () => {
        await release;
        return { output: 'three boxes', success: true };
      },
    },
  ];
}

const checkerProfile = `---\nid: checker\nname: Checker\nmax_iterations: 6\ntools: [check_disks, slow_inventory]\napprovals:\n  default: allow\n---\nYou check things.\n`;

/** A long answer, so the conversation is taller than the view. */
const longAnswer = Array.from({ length: 30 }, (_, index) => `Paragraph ${index + 1} of the long story about the house and its disks.`).join('\n\n');

/** How far the transcript is from its end, in pixels. */
function distanceFromEnd(page: Page): Promise<number> {
  return page.locator(sel.transcript).evaluate((box) => box.scrollHeight - box.scrollTop - box.clientHeight);
}

/** Whether the element's last line is inside the transcript's visible box. */
function visibleInTranscript(locator: Locator): Promise<boolean> {
  return locator.evaluate((node) => {
    const box = node.closest('#transcript')!.getBoundingClientRect();
    const item = node.getBoundingClientRect();
    return item.height > 0 && item.bottom <= box.bottom + 1 && item.bottom > box.top;
  });
}

async function expectInView(locator: Locator, what: string): Promise<void> {
  await locator.waitFor();
  // The view settles within a frame of the content arriving.
  await expect.poll(() => visibleInTranscript(locator), { message: `${what} is in view`, timeout: 2000 }).toBe(true);
}

/** The user messages a session holds, from its stored history. */
async function userMessages(hearth: Hearth, sessionId: string): Promise<string[]> {
  const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
  return body.messages.filter((message: { role: string }) => message.role === 'user').map((message: { content: string }) => message.content);
}

async function sessionIds(hearth: Hearth): Promise<string[]> {
  const { body } = await hearth.request('GET', '/sessions');
  return body.map((session: { session_id: string }) => session.session_id);
}

describe.skipIf(skipBrowserTests)('the third hour: the transcript follows, jump to latest, no lost message', () => {
  const browser = useBrowser();

  for (const viewport of viewports) {
    it(`follows after a failed tool card, and counts what arrives while scrolled up, with Jump to latest (${viewport.width} px, ${viewport.colorScheme})`, browserTest, async () => {
      let releaseInventory!: () => void;
      const inventoryReleased = new Promise<void>((resolve) => (releaseInventory = resolve));
      const hearth = await browser.hearth({ tools: checkerTools(inventoryReleased), profiles: { checker: checkerProfile } });
      const sessionId = await hearth.createSession('checker');
      const page = await browser.openPage(hearth, { hash: sessionId, viewport, colorScheme: viewport.colorScheme });
      await waitForApp(page);

      hearth.llm.script({ content: longAnswer });
      await sendMessage(page, 'Tell me the long story');
      await waitForAnswer(page, longAnswer);
      await waitForIdle(page);
      expect(await distanceFromEnd(page)).toBeLessThanOrEqual(2);

      // 1. A failed call opens its Result: the answer after it, and the next exchange, are still in view.
      hearth.llm.script({ toolCalls: [{ name: 'check_disks', arguments: {} }] }, { content: 'The disk check failed; the details are above.' });
      await sendMessage(page, 'Check the disks');
      const failedCard = page.locator(`${sel.tool}[data-tool="check_disks"][data-status="failed"]`);
      await failedCard.locator('details.tool-result[open]').waitFor();
      expect(await failedCard.locator('.tool-result-text').evaluate((node) => node.getBoundingClientRect().height)).toBeGreaterThan(120);
      await waitForAnswer(page, 'The disk check failed; the details are above.');
      await waitForIdle(page);
      await expectInView(page.locator(sel.assistant).last(), 'the answer after the failed card');
      expect(await distanceFromEnd(page)).toBeLessThanOrEqual(2);

      hearth.llm.script({ content: 'Nothing else to report.' });
      await sendMessage(page, 'Anything else?');
      await expectInView(page.locator(sel.user, { hasText: 'Anything else?' }), 'the person’s next message');
      await waitForAnswer(page, 'Nothing else to report.');
      await waitForIdle(page);
      await expectInView(page.locator(sel.assistant).last(), 'the reply to it');

      // 2. Scrolled up on purpose while a run works: the view stays, and Jump to latest counts the new items.
      hearth.llm.script(
        { toolCalls: [{ name: 'slow_inventory', arguments: {} }] },
        { toolCalls: [{ name: 'check_disks', arguments: {} }] },
        { content: 'Inventory done, disks still failing.' },
      );
      await sendMessage(page, 'Take the inventory');
      await page.locator(`${sel.tool}[data-tool="slow_inventory"][data-status="pending"]`).waitFor();
      const jump = page.locator('button.jump-to-latest');
      expect(await jump.isVisible()).toBe(false);
      const transcriptBox = (await page.locator(sel.transcript).boundingBox())!;
      await page.mouse.move(transcriptBox.x + transcriptBox.width / 2, transcriptBox.y + transcriptBox.height / 2);
      await page.mouse.wheel(0, -600);
      await jump.waitFor({ state: 'visible' });
      expect((await jump.textContent())?.trim()).toBe('Jump to latest');
      // What the person reads: the item in the middle of the view, and where it is.
      const readItemTop = () =>
        page.evaluate(() => {
          const box = document.querySelector('#transcript')!.getBoundingClientRect();
          const item = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)?.closest('#transcript > .item, #transcript > .history-block > .item');
          return item ? { text: (item.textContent ?? '').slice(0, 60), top: Math.round(item.getBoundingClientRect().top) } : undefined;
        });
      const reading = await readItemTop();
      expect(reading).toBeDefined();

      releaseInventory();
      await page.locator(`${sel.tool}[data-tool="check_disks"][data-status="failed"]`).nth(1).waitFor();
      await waitForAnswer(page, 'Inventory done, disks still failing.');
      await waitForIdle(page);
      // A new tool card and the answer arrived; the inventory card only got its result.
      await expect.poll(() => jump.textContent()).toBe('Jump to latest · 2 new');
      const readLater = await readItemTop();
      expect(readLater?.text).toBe(reading!.text);
      expect(Math.abs(readLater!.top - reading!.top)).toBeLessThanOrEqual(2);
      expect(await visibleInTranscript(page.locator(sel.assistant).last())).toBe(false);
      await screenshot(page, `third-hour-jump-to-latest-${viewport.width}-${viewport.colorScheme}`);
      await expectNoViolations(page, `${viewport.width} px ${viewport.colorScheme}, Jump to latest shown`);

      await jump.click();
      await expectInView(page.locator(sel.assistant).last(), 'the latest answer after Jump to latest');
      await jump.waitFor({ state: 'hidden' });

      // Scrolling back down to the end by hand follows again, and the button goes.
      await page.mouse.move(transcriptBox.x + transcriptBox.width / 2, transcriptBox.y + transcriptBox.height / 3);
      await page.mouse.wheel(0, -300);
      await jump.waitFor({ state: 'visible' });
      await page.mouse.wheel(0, 5000);
      await jump.waitFor({ state: 'hidden' });
    });

    it(`a message sent right after New session, before its socket is open, arrives exactly once in the new session (${viewport.width} px)`, browserTest, async () => {
      const hearth = await browser.hearth();
      const oldSessionId = await hearth.createSession();
      const page = await browser.openPage(hearth, { hash: oldSessionId, viewport, colorScheme: viewport.colorScheme });
      await waitForApp(page);
      await page.locator(`${sel.send}:not([disabled])`).waitFor();
      const replies = ['First reply.', 'Second reply.', 'Third reply.', 'Fourth reply.'];
      hearth.llm.script(...replies.map((content) => ({ content })));

      // Enter 0, 10, 25 and 40 ms after the click, typed into the box as the person would.
      const delaysMs = [0, 10, 25, 40];
      for (const [index, delayMs] of delaysMs.entries()) {
        const before = await sessionIds(hearth);
        const text = `Quick message ${index + 1}`;
        const measured = await page.evaluate(
          ({ delayMs, text }) =>
            new Promise<number>((resolve) => {
              const box = document.querySelector('textarea[aria-label="Message"]') as HTMLTextAreaElement;
              const clickedAt = performance.now();
              (document.querySelector('button[aria-label="New session"]') as HTMLButtonElement).click();
              setTimeout(() => {
                box.value = text;
                box.dispatchEvent(new Event('input', { bubbles: true }));
                box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
                resolve(performance.now() - clickedAt);
              }, delayMs);
            }),
          { delayMs, text },
        );
        expect(measured).toBeLessThan(50);
        await waitForAnswer(page, replies[index]!);
        await waitForIdle(page);
        const after = await sessionIds(hearth);
        const created = after.filter((id) => !before.includes(id));
        expect(created, `one new session for try ${index + 1}`).toHaveLength(1);
        const [newSessionId] = created;
        expect(decodeURIComponent(await page.evaluate(() => location.hash.slice(1)))).toBe(newSessionId);
        expect(await userMessages(hearth, newSessionId!)).toEqual([text]);
        expect(await page.locator(sel.user).allTextContents()).toHaveLength(1);
        expect(await page.locator(sel.message).inputValue()).toBe('');
      }
      expect(await userMessages(hearth, oldSessionId)).toEqual([]);
    });
  }

  it('Enter while the new session’s socket is held open by the test: queued, then sent exactly once when it opens', browserTest, async () => {
    const hearth = await browser.hearth();
    const page = await browser.openPage(hearth, { viewport: { width: 1366, height: 900 } });
    await waitForApp(page);
    await page.locator('#transcript .profile-card').first().waitFor();
    let releaseSocket!: () => void;
    const socketReleased = new Promise<void>((resolve) => (releaseSocket = resolve));
    const held: WebSocketRoute[] = [];
    let socketAsked!: () => void;
    const asked = new Promise<void>((resolve) => (socketAsked = resolve));
    await page.routeWebSocket(/\/ws\/sessions\//, async (socket) => {
      held.push(socket);
      socketAsked();
      await socketReleased;
      socket.connectToServer();
    });
    hearth.llm.script({ content: 'Got it, once.' });

    await page.locator(sel.newSession).click();
    await asked;
    await page.locator(sel.message).fill('Sent before the socket opened');
    await page.locator(sel.message).press('Enter');
    // The socket is still held: nothing reached the server yet, and the message waits (not dropped).
    expect(hearth.llm.requests.filter((request) => Array.isArray(request.body?.messages))).toHaveLength(0);
    await screenshot(page, 'third-hour-queued-before-socket');
    releaseSocket();
    await waitForAnswer(page, 'Got it, once.', 10_000);
    await waitForIdle(page);
    const [sessionId] = await sessionIds(hearth);
    expect(await sessionIds(hearth)).toHaveLength(1);
    expect(await userMessages(hearth, sessionId!)).toEqual(['Sent before the socket opened']);
    expect(await page.locator(sel.user).allTextContents()).toHaveLength(1);
    expect(held).toHaveLength(1);
  });
});
