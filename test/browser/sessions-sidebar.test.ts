/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The sessions sidebar, walked in one page of one server: every session the steps use is made before
// the page loads (as each test did), and each step reads the list's order from the server as it is then.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Hearth } from '../support/hearth-server.ts';
import { sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';

/** The session ids of the sidebar list, top to bottom (only the visible items). */
function listedIds(page: Page): Promise<string[]> {
  return page.locator(`${sel.sessionItem}:visible`).evaluateAll((items) => items.map((item) => item.getAttribute('data-session-id')!));
}

async function waitForListed(page: Page, ids: string[]): Promise<void> {
  try {
    await page.waitForFunction(
      ({ selector, want }) => {
        const got = [...document.querySelectorAll(selector)]
          .filter((item) => (item as HTMLElement).offsetParent !== null || (item as HTMLElement).getClientRects().length > 0)
          .map((item) => item.getAttribute('data-session-id'));
        return JSON.stringify(got) === JSON.stringify(want);
      },
      { selector: sel.sessionItem, want: ids },
    );
  } catch (error) {
    throw new Error(`session list is ${JSON.stringify(await listedIds(page))}, expected ${JSON.stringify(ids)}\n${String(error)}`);
  }
}

/** A session with a first message (the list shows no empty session) and a title. */
async function titled(hearth: Hearth, title: string, profileId?: string): Promise<string> {
  const id = await hearth.createSession(profileId);
  expect((await hearth.request('POST', `/sessions/${id}/messages`, { content: 'Hello' })).status).toBe(200);
  expect((await hearth.request('PATCH', `/sessions/${id}`, { title })).status).toBe(200);
  return id;
}

const hashOf = (page: Page) => page.evaluate(() => decodeURIComponent(location.hash.slice(1)));

/** Sessions listed in order of activity (newest first): made last, so no later step's session is newer. */
interface PinSessions {
  oldest: string;
  middle: string;
  newest: string;
}

/** Pinned sessions (`oldest` pinned before the page loaded) list first, the Pin button pins, and a session opens by its link. Runs first, before any session changes. */
async function pinnedFirst(page: Page, hearth: Hearth, { oldest, middle, newest }: PinSessions): Promise<void> {
  const restOrder = (await hearth.request('GET', '/sessions')).body.map((summary: any) => summary.session_id ?? summary.id);
  expect(restOrder[0]).toBe(oldest);
  await waitForListed(page, restOrder);
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${oldest}"]`).getAttribute('data-pinned')).toBe('true');
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${middle}"]`).getAttribute('data-pinned')).toBe('false');
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${oldest}"] button[aria-label="Unpin"]`).count()).toBe(1);

  await page.locator(`${sel.sessionItem}[data-session-id="${middle}"] button[aria-label="Pin"]`).click();
  await page.locator(`${sel.sessionItem}[data-session-id="${middle}"][data-pinned="true"]`).waitFor();
  expect((await hearth.request('GET', `/sessions/${middle}`)).body.pinned).toBe(true);
  const pinnedOrder = (await hearth.request('GET', '/sessions')).body.map((summary: any) => summary.session_id ?? summary.id);
  await waitForListed(page, pinnedOrder);
  expect(pinnedOrder.slice(0, 2).sort()).toEqual([oldest, middle].sort());
  expect(pinnedOrder[2]).toBe(newest);

  await page.locator(`${sel.sessionItem}[data-session-id="${oldest}"] .session-link`).click();
  await page.waitForFunction((id) => location.hash === `#${id}`, oldest);
  await page.waitForFunction((selector) => document.querySelector(selector)?.textContent?.includes('Oldest chat'), sel.sessionTitle);
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${oldest}"] .session-link`).getAttribute('aria-current')).toBe('page');
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${newest}"] .session-link`).getAttribute('aria-current')).not.toBe('page');
}

/** New session starts with the profile last chosen in the header and puts its id in the hash; it joins the list once something is said. */
async function newSessionWithHeaderProfile(page: Page, hearth: Hearth, existing: string): Promise<void> {
  // No session open: the header's select is the profile the next session starts with.
  await page.evaluate(() => (location.hash = ''));
  await page.locator('#transcript .profile-card').first().waitFor();
  const select = page.locator(sel.sessionProfile);
  await select.locator('option[value="server_admin"]').waitFor({ state: 'attached' });
  expect(await select.locator('option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value))).toEqual(
    expect.arrayContaining(['secretary', 'server_admin', 'smart_home']),
  );
  await select.selectOption('server_admin');
  // The list names each session's profile as the person sees it, however its two requests came back.
  await page.locator(`${sel.sessionItem}[data-session-id="${existing}"] .session-link`).click();
  await page.locator(`${sel.sessionItem}[data-session-id="${existing}"] .session-meta`).filter({ hasText: 'Personal Secretary' }).waitFor();
  await waitForHeaderProfile(page, 'Personal Secretary');
  await page.locator(sel.newSession).click();
  await page.waitForFunction((old) => location.hash !== '' && location.hash !== `#${old}`, existing);
  const created = await hashOf(page);

  const { status, body } = await hearth.request('GET', `/sessions/${created}`);
  expect(status).toBe(200);
  expect(body.profile_id).toBe('server_admin');
  await waitForHeaderProfile(page, 'Server Administrator');
  expect(await page.locator(sel.user).count()).toBe(0);
  // Empty, it is not in the list yet: New session leaves nothing behind until something is said.
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${created}"]`).count()).toBe(0);

  // A message goes to the new session, which then joins the list as the open one.
  hearth.llm.script({ content: 'Admin here.' });
  await sendMessage(page, 'Check the disk');
  await waitForAnswer(page, 'Admin here.');
  await page.locator(`${sel.sessionItem}[data-session-id="${created}"]`).waitFor();
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${created}"] .session-link`).getAttribute('aria-current')).toBe('page');
  const messages = (await hearth.request('GET', `/sessions/${created}`)).body.messages;
  expect(messages.map((message: any) => message.content)).toEqual(['Check the disk', 'Admin here.']);
  expect((await hearth.request('GET', `/sessions/${existing}`)).body.messages).toHaveLength(2);
  await waitForIdle(page);
}

/** A session that came from Telegram is marked, one from the OpenAI-compatible front door too, and only those. */
async function telegramMarked(page: Page, fromPage: string, fromTelegram: string, fromOpenAi: string): Promise<void> {
  const mark = page.locator(`${sel.sessionItem}[data-session-id="${fromTelegram}"] .origin-mark`);
  await mark.waitFor();
  expect(await mark.textContent()).toBe('Telegram');
  expect(await mark.getAttribute('aria-label')).toBe('From Telegram');
  const openAiMark = page.locator(`${sel.sessionItem}[data-session-id="${fromOpenAi}"] .origin-mark`);
  expect(await openAiMark.textContent()).toBe('OpenAI API');
  expect(await openAiMark.getAttribute('aria-label')).toBe('From OpenAI API');
  expect(await page.locator(`${sel.sessionItem}[data-session-id="${fromPage}"] .origin-mark`).count()).toBe(0);
}

/** The open session is renamed with the Rename button, the title input and Enter; Escape cancels a rename. */
async function renamed(page: Page, hearth: Hearth, id: string): Promise<void> {
  await showSession(page, id);
  const item = page.locator(`${sel.sessionItem}[data-session-id="${id}"]`);
  await item.locator('button[aria-label="Rename"]').click();
  const input = page.locator('input[aria-label="Session title"]');
  await input.waitFor();
  await input.fill('Holiday plans 2025');
  await input.press('Enter');
  await input.waitFor({ state: 'detached' });
  await page.waitForFunction(
    ({ selector, id }) => document.querySelector(`${selector}[data-session-id="${id}"]`)?.textContent?.includes('Holiday plans 2025'),
    { selector: sel.sessionItem, id },
  );
  expect((await hearth.request('GET', `/sessions/${id}`)).body.title).toBe('Holiday plans 2025');
  await page.waitForFunction((selector) => document.querySelector(selector)?.textContent?.trim() === 'Holiday plans 2025', sel.sessionTitle);

  // Escape cancels a rename.
  await item.locator('button[aria-label="Rename"]').click();
  await input.waitFor();
  await input.fill('Should not be saved');
  await input.press('Escape');
  await input.waitFor({ state: 'detached' });
  expect(await item.textContent()).toContain('Holiday plans 2025');
  expect((await hearth.request('GET', `/sessions/${id}`)).body.title).toBe('Holiday plans 2025');
}

/** Another session is deleted once the dialog is confirmed, and kept when it is cancelled; the open one stays open. */
async function deletedAfterConfirm(page: Page, hearth: Hearth, keep: string, doomed: string): Promise<void> {
  await showSession(page, keep);
  const item = page.locator(`${sel.sessionItem}[data-session-id="${doomed}"]`);
  await item.waitFor();

  await item.locator('button[aria-label="Delete"]').click();
  const dialog = page.locator('dialog[open]');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  expect((await hearth.request('GET', `/sessions/${doomed}`)).status).toBe(200);
  expect(await item.count()).toBe(1);

  await item.locator('button[aria-label="Delete"]').click();
  await dialog.waitFor();
  expect(await dialog.textContent()).toContain('Delete me');
  await dialog.locator('button[aria-label="Confirm delete"]').click();
  await item.waitFor({ state: 'detached' });
  expect((await hearth.request('GET', `/sessions/${doomed}`)).status).toBe(404);
  expect((await hearth.request('GET', `/sessions/${keep}`)).status).toBe(200);
  expect(await hashOf(page)).toBe(keep);
}

/** A deleted open session is left for another one. */
async function openSessionDeleted(page: Page, hearth: Hearth, other: string, open: string): Promise<void> {
  await showSession(page, open);
  await page.locator(`${sel.sessionItem}[data-session-id="${open}"] button[aria-label="Delete"]`).click();
  await page.locator('dialog[open] button[aria-label="Confirm delete"]').click();
  await page.locator(`${sel.sessionItem}[data-session-id="${open}"]`).waitFor({ state: 'detached' });
  await page.waitForFunction((id) => location.hash !== `#${id}`, open);
  expect((await hearth.request('GET', `/sessions/${open}`)).status).toBe(404);
  expect((await hearth.request('GET', `/sessions/${other}`)).status).toBe(200);
  await waitForApp(page);
}

/** The list filters by title, case-insensitively (no other step's title has "garden" or "backup" in it). */
async function filtered(page: Page, hearth: Hearth, { garden, server, gardenTwo }: { garden: string; server: string; gardenTwo: string }): Promise<void> {
  await page.locator(`${sel.sessionItem}[data-session-id="${garden}"]`).waitFor();
  const all = (await hearth.request('GET', '/sessions')).body.map((summary: any) => summary.session_id ?? summary.id);
  await waitForListed(page, all);

  await page.locator(sel.filter).fill('garden');
  await waitForListed(page, all.filter((id: string) => id === garden || id === gardenTwo));
  await page.locator(sel.filter).fill('BACKUP');
  await waitForListed(page, [server]);
  await page.locator(sel.filter).fill('nothing matches this');
  await waitForListed(page, []);
  await page.locator(sel.filter).fill('');
  await waitForListed(page, all);
}

/** The header switches the open session to another profile, between runs only; New session then starts with it. */
async function headerProfileSwitch(page: Page, hearth: Hearth, sessionId: string): Promise<void> {
  // As in a browser that has chosen nothing yet (an earlier step chose server_admin for New session).
  await page.evaluate(() => localStorage.removeItem('hearth.profile'));
  await showSession(page, sessionId);
  await waitForHeaderProfile(page, 'Personal Secretary');
  const header = page.locator(sel.sessionProfile);
  // Choosable once the session's socket is in step (the name shows before that), and not before.
  await page.locator(`${sel.sessionProfile}:enabled`).waitFor();

  await header.selectOption({ label: 'Server Administrator' });
  await page.locator(`${sel.sessionItem}[data-session-id="${sessionId}"] .session-meta`).filter({ hasText: 'Server Administrator' }).waitFor();
  expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('server_admin');

  // The next turn runs with the new profile's tools; the choice is locked while it runs.
  hearth.llm.script({ chunks: ['Checking ', 'the ', 'disks.'], delayMs: 150 });
  await sendMessage(page, 'Are the disks full?');
  await page.locator(sel.stop).waitFor();
  expect(await header.isDisabled()).toBe(true);
  await waitForAnswer(page, 'Checking the disks.');
  await waitForIdle(page);
  expect(await header.isEnabled()).toBe(true);
  const offered = hearth.llm.requests.at(-1)!.body.tools.map((tool: any) => tool.function.name);
  expect(offered).toContain('ssh_exec');
  await waitForHeaderProfile(page, 'Server Administrator');

  // The header's is the one profile choice: the profile switched to is the one New session starts with.
  await page.locator(sel.newSession).click();
  await page.waitForFunction((old) => location.hash.length > 1 && location.hash !== `#${old}`, sessionId);
  expect((await hearth.request('GET', `/sessions/${await hashOf(page)}`)).body.profile_id).toBe('server_admin');
}

/** The session stays in the hash and its transcript is restored on reload; it was titled from its first message. */
async function restoredOnReload(page: Page, hearth: Hearth, id: string): Promise<void> {
  await showSession(page, id);
  hearth.llm.script({ content: 'The **answer** is 42.' });
  await sendMessage(page, 'What is the answer?');
  await waitForAnswer(page, 'The answer is 42.');
  await waitForIdle(page);
  expect(await hashOf(page)).toBe(id);

  await page.reload();
  await waitForApp(page);
  await waitForAnswer(page, 'The answer is 42.');
  expect(await hashOf(page)).toBe(id);
  expect(await page.locator(sel.user).count()).toBe(1);
  expect(await page.locator(sel.assistant).count()).toBe(1);
  expect(await page.locator(sel.user).textContent()).toContain('What is the answer?');
  expect(await page.locator(`${sel.assistant} strong`).textContent()).toBe('answer');
  // The session was titled from its first message, shown in the header and the list.
  const { body } = await hearth.request('GET', `/sessions/${id}`);
  await page.waitForFunction(({ selector, title }) => document.querySelector(selector)?.textContent?.trim() === title, { selector: sel.sessionTitle, title: body.title });
}

describe.skipIf(skipBrowserTests)('sessions sidebar in the browser', () => {
  const browser = useBrowser();

  it('in one page: pinned first and Pin; New session with the header’s profile; the Telegram and OpenAI API marks; rename; delete confirmed or cancelled; a deleted open session left; the filter; the header’s profile switch between runs; the hash and transcript kept on reload', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    const reloaded = await hearth.createSession();
    const existing = await titled(hearth, 'Existing chat');
    const fromPage = await titled(hearth, 'From the page');
    const created = await hearth.app.sessions.create({ origin: 'telegram' });
    if (!created.ok) throw new Error(created.message);
    const fromTelegram = created.session.id;
    expect((await hearth.request('POST', `/sessions/${fromTelegram}/messages`, { content: 'Hello from the phone' })).status).toBe(200);
    const fromOpenAiApp = await hearth.app.sessions.create({ origin: 'openai' });
    if (!fromOpenAiApp.ok) throw new Error(fromOpenAiApp.message);
    const fromOpenAi = fromOpenAiApp.session.id;
    expect((await hearth.request('POST', `/sessions/${fromOpenAi}/messages`, { content: 'Hello from a chat app' })).status).toBe(200);
    const toRename = await titled(hearth, 'Untitled plans');
    const keep = await titled(hearth, 'Keep me');
    const doomed = await titled(hearth, 'Delete me');
    const other = await titled(hearth, 'Other chat');
    const open = await titled(hearth, 'Open chat');
    const garden = await titled(hearth, 'Garden watering');
    const server = await titled(hearth, 'Server backups');
    const gardenTwo = await titled(hearth, 'GARDEN lights');
    const diskTrouble = await titled(hearth, 'Disk trouble');
    const oldest = await titled(hearth, 'Oldest chat');
    const middle = await titled(hearth, 'Middle chat');
    const newest = await titled(hearth, 'Newest chat');
    await hearth.request('PATCH', `/sessions/${oldest}`, { pinned: true });
    const page = await browser.openPage(hearth, { hash: newest });
    await waitForApp(page);

    await pinnedFirst(page, hearth, { oldest, middle, newest });
    await newSessionWithHeaderProfile(page, hearth, existing);
    await telegramMarked(page, fromPage, fromTelegram, fromOpenAi);
    await renamed(page, hearth, toRename);
    await deletedAfterConfirm(page, hearth, keep, doomed);
    await openSessionDeleted(page, hearth, other, open);
    await filtered(page, hearth, { garden, server, gardenTwo });
    await headerProfileSwitch(page, hearth, diskTrouble);
    await restoredOnReload(page, hearth, reloaded);
  });
});
