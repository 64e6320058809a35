/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The third hour (issue 35), the transcript's part: the view follows the conversation after a
// failed tool call opened its result; scrolled up on purpose, the person stays where they are and
// a *Jump to latest* button counts what arrived; a message sent right after *New session*, before
// the new session's socket is open, arrives exactly once; and the small things of the list.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator, Page, WebSocketRoute } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { toolFailure } from '../../src/failure.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { expectNoViolations } from '../support/axe.ts';
import { closePanel, hearthMetrics, openPanel, screenshot, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { fixtureServer, writeMcpConfig } from '../support/mcp-servers.ts';

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

/** A listed session (it has a message), titled, optionally from Telegram. */
async function listedSession(hearth: Hearth, title: string, origin?: 'telegram'): Promise<string> {
  let sessionId: string;
  if (origin) {
    const created = await hearth.app.sessions.create({ origin });
    if (!created.ok) throw new Error(created.message);
    sessionId = created.session.id;
  } else sessionId = await hearth.createSession();
  hearth.llm.script({ content: 'Hello back.' });
  expect((await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' })).status).toBeLessThan(300);
  expect((await hearth.request('PATCH', `/sessions/${sessionId}`, { title })).status).toBe(200);
  return sessionId;
}

/** Rectangles of the session entry's shown actions, its Telegram mark and the time at the end of its second line. */
function sidebarEntryBoxes(entry: Locator) {
  return entry.evaluate((item) => {
    const box = (rect: DOMRect) => ({ left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom });
    const meta = item.querySelector('.session-meta')!.firstChild as Text;
    const time = document.createRange();
    time.setStart(meta, meta.data.lastIndexOf('·') + 2);
    time.setEnd(meta, meta.data.length);
    return {
      actions: box(item.querySelector('.session-actions')!.getBoundingClientRect()),
      actionsShown: getComputedStyle(item.querySelector('.session-actions')!).opacity === '1',
      mark: box(item.querySelector('.origin-mark')!.getBoundingClientRect()),
      time: box(time.getBoundingClientRect()),
      timeText: time.toString(),
    };
  });
}

type Box = { left: number; right: number; top: number; bottom: number };
const overlaps = (one: Box, other: Box) => one.left < other.right && other.left < one.right && one.top < other.bottom && other.top < one.bottom;

/** How many lines each word of the element's text takes (a word broken inside takes two). */
function linesPerWord(locator: Locator): Promise<Record<string, number>> {
  return locator.evaluate((node) => {
    // The panel is drawn again as servers connect: a node replaced meanwhile is measured again.
    if (!node.isConnected) return { replaced: 0 };
    const text = node.firstChild as Text;
    const lines: Record<string, number> = {};
    for (const match of text.data.matchAll(/[^\s-]+/g)) {
      const range = document.createRange();
      range.setStart(text, match.index);
      range.setEnd(text, match.index + match[0].length);
      lines[match[0]] = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
    }
    return lines;
  });
}

type Viewport = (typeof viewports)[number];

/** 1. A failed call opens its Result and the view still follows; 2. scrolled up on purpose, the view stays and Jump to latest counts. */
async function followsThenJumpToLatest(page: Page, hearth: Hearth, viewport: Viewport, releaseInventory: () => void): Promise<void> {
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
}

/** Stopped sits with the answer, below its text and above Copy and Regenerate. */
async function stoppedAboveActions(page: Page, hearth: Hearth): Promise<void> {
  hearth.llm.script({ chunks: ['Once ', 'upon ', 'a time'], hang: true });
  await sendMessage(page, 'Tell me a story');
  await waitForAnswer(page, 'Once upon a time');
  await page.locator(sel.stop).click();
  const answer = page.locator(`${sel.assistant}[data-stopped="true"]`);
  await answer.locator('.regenerate-answer').waitFor();
  const order = await answer.evaluate((item) => {
    const top = (selector: string) => item.querySelector(selector)!.getBoundingClientRect().top;
    const children = [...item.children].map((child) => child.className);
    return { children, stopped: top('.stopped-label'), actions: top('.message-actions'), text: top('.markdown') };
  });
  expect(order.children.indexOf('stopped-label')).toBeLessThan(order.children.indexOf('message-actions'));
  expect(order.stopped).toBeGreaterThan(order.text);
  expect(order.stopped).toBeLessThan(order.actions);
  await waitForIdle(page);
}

/** The session entry's hover actions cover neither its Telegram mark nor the time; the drawer (on a phone) is closed again after. */
async function sessionEntryActionsClear(page: Page, fromTelegram: string, viewport: Viewport): Promise<void> {
  const drawer = viewport.width < 720;
  if (drawer) {
    await page.locator(sel.openSessions).click();
    await page.waitForFunction(() => getComputedStyle(document.querySelector('#sidebar')!).transform === 'none');
  }
  const entry = page.locator(`${sel.sessionItem}[data-session-id="${fromTelegram}"]`);
  await entry.locator('.origin-mark').waitFor();
  await entry.hover();
  await expect.poll(async () => (await sidebarEntryBoxes(entry)).actionsShown).toBe(true);
  const boxes = await sidebarEntryBoxes(entry);
  expect(boxes.timeText).toMatch(/\d/);
  expect(overlaps(boxes.actions, boxes.mark), `actions ${JSON.stringify(boxes.actions)} over the mark ${JSON.stringify(boxes.mark)}`).toBe(false);
  expect(overlaps(boxes.actions, boxes.time), `actions ${JSON.stringify(boxes.actions)} over the time ${JSON.stringify(boxes.time)}`).toBe(false);
  await screenshot(page, `third-hour-sidebar-hover-${viewport.width}`);
  if (drawer) {
    await page.locator(sel.closeSessions).click();
    await page.waitForFunction(() => getComputedStyle(document.querySelector('#sidebar')!).transform !== 'none');
  }
}

/** The write_tool card asks to install, not run (in a session of the secretary, who has write_tool). */
async function writeToolAsksToInstall(page: Page, hearth: Hearth): Promise<void> {
  const code = "export const name = 'roll_dice';\nexport const description = 'Rolls a die.';\nexport const parameters = { type: 'object', properties: {} };\nexport async function execute() { return '4'; }\n";
  hearth.llm.script({ toolCalls: [{ name: 'write_tool', arguments: { name: 'roll_dice', code } }] }, { content: 'Left uninstalled.' });
  await sendMessage(page, 'Make me a dice tool');
  const approval = page.locator(`${sel.tool}[data-tool="write_tool"] ${sel.approval}`);
  await approval.locator(sel.deny).waitFor();
  expect(await approval.locator('.approval-question').textContent()).toBe('Waiting for your approval to install:');
  expect(await approval.locator('.approval-subject').textContent()).toContain('roll_dice');
  await screenshot(page, 'third-hour-write-tool-install');
  await approval.locator(sel.deny).click();
  await waitForAnswer(page, 'Left uninstalled.');
  await waitForIdle(page);
}

/** MCP switches say their state, and server and tool names keep their words whole (the Tools panel is closed again after). */
async function mcpSwitchesAndNames(page: Page, viewport: Viewport): Promise<void> {
  const tools = await openPanel(page, 'Tools');
  const everything = tools.locator('section.mcp-server[data-mcp-server="everything"][data-status="connected"]');
  const echo = everything.locator('li[data-tool-name="everything__echo"]');
  await echo.waitFor();
  const longName = tools.locator('section.mcp-server[data-mcp-server="household-inventory-and-maintenance-records"] .mcp-server-name');
  await longName.waitFor();
  for (const name of [everything.locator('.mcp-server-name'), longName]) {
    await expect.poll(() => linesPerWord(name), { message: 'each word of the name on one line' }).toSatisfy((lines: Record<string, number>) => Object.values(lines).every((count) => count === 1));
  }
  const echoSwitch = echo.locator('input[role="switch"]');
  expect(await echoSwitch.isChecked()).toBe(false);
  expect(await echo.locator('label.tool-switch').textContent()).toBe('Off');
  expect(await everything.locator('.mcp-server-title label.tool-switch').textContent()).toBe('All off');
  await echoSwitch.click();
  await everything.locator('li[data-tool-name="everything__echo"][data-enabled="true"]').waitFor();
  expect(await everything.locator('li[data-tool-name="everything__echo"] label.tool-switch').textContent()).toBe('On');
  expect(await everything.locator('.mcp-server-title label.tool-switch').textContent()).toMatch(/^1 of \d+ on$/);

  expect(await tools.evaluate((aside) => aside.scrollWidth <= aside.clientWidth)).toBe(true);
  await screenshot(page, `third-hour-mcp-names-${viewport.width}`);
  await expectNoViolations(page, `${viewport.width} px ${viewport.colorScheme}, Tools panel with MCP servers`);
  await closePanel(page, 'Tools');
}

/** The schedule form previews its next runs with its defaults, before any typing (the panel is closed again after). */
async function schedulePreviewBeforeTyping(page: Page): Promise<void> {
  const schedules = await openPanel(page, 'Schedules');
  const nextRuns = schedules.locator('form.schedule-form section.schedule-next-runs[data-state="shown"] li');
  await nextRuns.nth(2).waitFor();
  expect(await nextRuns.count()).toBe(3);
  for (const text of await nextRuns.allTextContents()) expect(text).toMatch(/09:00/);
  await closePanel(page, 'Schedules');
}

/** A message sent right after New session, before its socket is open, arrives exactly once in the new session (four timings). */
async function messageRightAfterNewSession(page: Page, hearth: Hearth, oldSessionId: string): Promise<void> {
  await page.locator(`${sel.send}:not([disabled])`).waitFor();
  const oldMessages = await userMessages(hearth, oldSessionId);
  const replies = ['First reply.', 'Second reply.', 'Third reply.', 'Fourth reply.'];
  hearth.llm.script(...replies.map((content) => ({ content })));

  // Enter 0, 5, 15 and 30 ms after the click (the page's timers run late under load; each delay is measured).
  const delaysMs = [0, 5, 15, 30];
  const raced: boolean[] = [];
  for (const [index, delayMs] of delaysMs.entries()) {
    const before = await sessionIds(hearth);
    const text = `Quick message ${index + 1}`;
    const { measured, enteredAt } = await page.evaluate(
      ({ delayMs, text }) =>
        new Promise<{ measured: number; enteredAt: number }>((resolve) => {
          const box = document.querySelector('textarea[aria-label="Message"]') as HTMLTextAreaElement;
          const clickedAt = performance.now();
          (document.querySelector('button[aria-label="New session"]') as HTMLButtonElement).click();
          setTimeout(() => {
            box.value = text;
            box.dispatchEvent(new Event('input', { bubbles: true }));
            const enteredAt = performance.now();
            box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
            resolve({ measured: enteredAt - clickedAt, enteredAt });
          }, delayMs);
        }),
      { delayMs, text },
    );
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
    // The race was real when Enter came before the new session's socket was in sync (the page's own measure of the open).
    const open = (await hearthMetrics(page)).lastOpen;
    expect(open.sessionId).toBe(newSessionId);
    raced.push(enteredAt < open.startedAt + open.ms);
    console.info(`Enter ${measured.toFixed(1)} ms after New session; the socket was in sync ${(open.startedAt + open.ms - enteredAt).toFixed(1)} ms later`);
  }
  expect(raced[0], 'Enter in the click’s own task comes before the socket').toBe(true);
  expect(raced.filter(Boolean).length).toBeGreaterThanOrEqual(2);
  expect(await userMessages(hearth, oldSessionId), 'the session open before the clicks got none of them').toEqual(oldMessages);
}

/** Enter while the new session's socket is held open by the test: queued, then sent exactly once when it opens. */
async function messageWhileSocketHeld(page: Page, hearth: Hearth): Promise<void> {
  let releaseSocket!: () => void;
  const socketReleased = new Promise<void>((resolve) => (releaseSocket = resolve));
  const held: WebSocketRoute[] = [];
  let socketAsked!: () => void;
  const asked = new Promise<void>((resolve) => (socketAsked = resolve));
  // Only sockets opened from now on are routed (the ones already open stay as they are).
  await page.routeWebSocket(/\/ws\/sessions\//, async (socket) => {
    held.push(socket);
    socketAsked();
    await socketReleased;
    socket.connectToServer();
  });
  const turnRequests = () => hearth.llm.requests.filter((request) => Array.isArray(request.body?.messages)).length;
  const requestsBefore = turnRequests();
  const before = await sessionIds(hearth);
  hearth.llm.script({ content: 'Got it, once.' });

  await page.locator(sel.newSession).click();
  await asked;
  await page.locator(sel.message).fill('Sent before the socket opened');
  await page.locator(sel.message).press('Enter');
  // The socket is still held: nothing reached the server yet, and the message waits (not dropped).
  expect(turnRequests()).toBe(requestsBefore);
  await screenshot(page, 'third-hour-queued-before-socket');
  releaseSocket();
  await waitForAnswer(page, 'Got it, once.', 10_000);
  await waitForIdle(page);
  const created = (await sessionIds(hearth)).filter((id) => !before.includes(id));
  expect(created).toHaveLength(1);
  expect(await userMessages(hearth, created[0]!)).toEqual(['Sent before the socket opened']);
  expect(await page.locator(sel.user).allTextContents()).toHaveLength(1);
  expect(held).toHaveLength(1);
}

// One server and one page per viewport walk every check in turn: none needs a fresh page, and each
// uses its own session (or, for the list, panels and New session, leaves the page as it found it).
describe.skipIf(skipBrowserTests)('the third hour: the transcript follows, jump to latest, no lost message, and the small things', () => {
  const browser = useBrowser();

  for (const viewport of viewports) {
    const phone = viewport.width < 720;
    const walk = phone
      ? 'follows after a failed tool card and counts with Jump to latest; Stopped above Copy and Regenerate; the Telegram entry’s actions clear its mark and time; MCP switches and names; write_tool asks to install; a message right after New session arrives once'
      : 'follows after a failed tool card and counts with Jump to latest; Stopped above Copy and Regenerate; the Telegram entry’s actions clear its mark and time; MCP switches and names; the schedule form’s preview; a message right after New session, and one while its socket is held, arrive once';
    it(`${viewport.width} px, ${viewport.colorScheme}: ${walk}`, { timeout: 150_000 }, async () => {
      let releaseInventory!: () => void;
      const inventoryReleased = new Promise<void>((resolve) => (releaseInventory = resolve));
      const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-third-hour-'));
      onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
      await writeMcpConfig(path.join(dataDir, 'mcp.json'), { everything: fixtureServer(), 'household-inventory-and-maintenance-records': fixtureServer() });
      const hearth = await browser.hearth({ dataDir, tools: checkerTools(inventoryReleased), profiles: { checker: checkerProfile } });
      const fromTelegram = await listedSession(hearth, 'Shopping list for the weekend market', 'telegram');
      const checkerSessionId = await hearth.createSession('checker');
      const page = await browser.openPage(hearth, { hash: checkerSessionId, viewport, colorScheme: viewport.colorScheme });
      await waitForApp(page);

      await followsThenJumpToLatest(page, hearth, viewport, releaseInventory);
      await stoppedAboveActions(page, hearth);
      await sessionEntryActionsClear(page, fromTelegram, viewport);

      const secretarySessionId = await hearth.createSession('secretary');
      await showSession(page, secretarySessionId);
      // The Tools panel's axe check sees the empty session, as before the merge: the write_tool card's code comes after.
      await mcpSwitchesAndNames(page, viewport);
      if (phone) await writeToolAsksToInstall(page, hearth);
      if (!phone) await schedulePreviewBeforeTyping(page);
      await messageRightAfterNewSession(page, hearth, secretarySessionId);
      if (!phone) await messageWhileSocketHeld(page, hearth);
    });
  }
});
