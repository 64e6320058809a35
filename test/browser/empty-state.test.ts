/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The empty state and small layout fixes: one server, one desktop page walking the desktop checks (each
// after the first in its own session) and one phone page for the drawer.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fakeLlmStep } from '../support/fake-llm.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { closePanel, screenshot, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';

const phone = { width: 390, height: 844 };
const desktop = { width: 1280, height: 800 };

const card = (profileId: string): string => `#transcript .profile-card[data-profile-id="${profileId}"]`;

async function shippedProfiles(hearth: Hearth): Promise<{ id: string; name: string; description: string; examples: string[] }[]> {
  return (await hearth.request('GET', '/agents/profiles')).body.profiles;
}

async function sessions(hearth: Hearth): Promise<{ session_id: string; profile_id: string }[]> {
  const { body } = await hearth.request('GET', '/sessions');
  return Array.isArray(body) ? body : body.sessions;
}

/** The session's stored user messages, once its answer is stored. */
async function userMessages(hearth: Hearth, sessionId: string): Promise<string[]> {
  const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
  return body.messages.filter((message: { role: string }) => message.role === 'user').map((message: { content: string }) => message.content);
}

/** Whether the element's text is cut (an ellipsis, or hidden overflow). */
function isCut(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((node) => node.scrollWidth > node.clientWidth);
}

/** Cards per profile with description and two examples; an example starts a session of that profile. Runs first: no session exists yet. */
async function cardsStartSession(page: Page, hearth: Hearth): Promise<void> {
  const profiles = await shippedProfiles(hearth);
  expect(profiles).toHaveLength(3);
  await page.locator(card('server_admin')).waitFor();
  for (const profile of profiles) {
    const shown = page.locator(card(profile.id));
    expect(await shown.locator('h2').innerText()).toBe(profile.name);
    expect(await shown.locator('.profile-description').innerText()).toBe(profile.description);
    expect(await shown.locator('button.example-prompt').allInnerTexts()).toEqual(profile.examples);
    expect(profile.examples).toHaveLength(2);
  }
  await screenshot(page, 'empty-state-cards');
  expect(await sessions(hearth)).toEqual([]);

  const example = profiles.find((profile) => profile.id === 'server_admin')!.examples[0]!;
  await page.locator(card('server_admin')).getByRole('button', { name: example }).click();
  await page.locator(sel.user).filter({ hasText: example }).waitFor();
  await waitForHeaderProfile(page, 'Server Administrator');
  await waitForIdle(page);
  expect(await page.locator('.profile-card').count()).toBe(0);
  const created = await sessions(hearth);
  expect(created.map((session) => session.profile_id)).toEqual(['server_admin']);
  expect(decodeURIComponent(new URL(page.url()).hash.slice(1))).toBe(created[0]!.session_id);
  expect(await userMessages(hearth, created[0]!.session_id)).toEqual([example]);
  expect(await page.locator(sel.assistant).last().innerText()).toContain(example.slice(0, 30));
}

/** An example sent in the open empty session goes there (no new session), switched to the example's profile. */
async function exampleInOpenSession(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession('secretary');
  const listedBefore = (await sessions(hearth)).map((session) => session.session_id);
  await showSession(page, sessionId);
  await waitForHeaderProfile(page, 'Personal Secretary');
  const example = (await shippedProfiles(hearth)).find((profile) => profile.id === 'smart_home')!.examples[0]!;
  await page.locator(card('smart_home')).getByRole('button', { name: example }).click();
  await page.locator(sel.user).filter({ hasText: example }).waitFor();
  await waitForHeaderProfile(page, 'Smart Home Assistant');
  await waitForIdle(page);
  const listedNow = (await sessions(hearth)).filter((session) => !listedBefore.includes(session.session_id));
  expect(listedNow).toEqual([expect.objectContaining({ session_id: sessionId, profile_id: 'smart_home' })]);
  expect(await userMessages(hearth, sessionId)).toEqual([example]);
}

/** The session title stays whole with a side panel open on a desktop (the panel is closed after). */
async function titleWholeWithPanel(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession('secretary');
  const title = 'Hello Hearth, what is new today';
  await hearth.request('PATCH', `/sessions/${sessionId}`, { title });
  await showSession(page, sessionId);
  await page.locator(sel.sessionTitle).filter({ hasText: title }).waitFor();
  await page.locator('button.panel-toggle[aria-label="Tools"]').click();
  await page.locator('#tools-panel').waitFor({ state: 'visible' });
  await screenshot(page, 'title-with-panel');
  expect(await isCut(page, sel.sessionTitle)).toBe(false);
  expect(await page.locator(sel.sessionTitle).isVisible()).toBe(true);
  await closePanel(page, 'Tools');
}

/** Code is coloured only in a known language: plain output stays plain, JSON is highlighted. */
async function codeColouredByLanguage(page: Page, hearth: Hearth): Promise<void> {
  await showSession(page, await hearth.createSession());
  const plain = 'total 8\ndrwxr-xr-x 2 root root 4096 Jan  1 00:00 logs\nif this were code, return nothing';
  hearth.llm.script({ content: ['Plain output:', '', '```', plain, '```', '', 'JSON:', '', '```', '{"disks": 3, "healthy": true}', '```'].join('\n') });
  await sendMessage(page, 'Show the output');
  await waitForIdle(page);
  const blocks = page.locator(`${sel.assistant} pre code`);
  await blocks.nth(1).waitFor();
  expect(await blocks.count()).toBe(2);
  expect(await blocks.nth(0).innerText()).toBe(plain);
  expect(await blocks.nth(0).locator('[class*="hljs-"]').count()).toBe(0);
  expect(await blocks.nth(1).getAttribute('class')).toMatch(/\blanguage-json\b/);
  expect(await blocks.nth(1).locator('.hljs-attr').allInnerTexts()).toEqual(['"disks"', '"healthy"']);
}

/** The context meter moves off 0 % after a stopped answer. */
async function meterAfterStop(page: Page, hearth: Hearth): Promise<void> {
  await showSession(page, await hearth.createSession());
  hearth.llm.script({ chunkCount: 2_000, chunkText: (index) => `word${index} `, delayMs: 20 });
  // A new session's meter reads 0 (once its context is read; the previous session's may show until then).
  await page.waitForFunction(() => (document.querySelector('#context-meter') as HTMLMeterElement).value === 0);
  await sendMessage(page, 'Tell me everything');
  await page.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? '').includes('word20 '), sel.assistant);
  await page.locator(sel.stop).click();
  await waitForIdle(page);
  await page.locator(`${sel.assistant} .stopped-label`).waitFor();
  await page.waitForFunction(() => (document.querySelector('#context-meter') as HTMLMeterElement).value > 0);
  expect(await page.locator('#context-share').innerText()).toMatch(/^\d+%$/);
  expect(await page.locator('#context-meter').getAttribute('title')).toMatch(/Context used: [1-9][\d,]* of/);
}

describe.skipIf(skipBrowserTests)('the empty state and small layout fixes in the browser', () => {
  const browser = useBrowser();

  it('desktop, in one page: profile cards and an example starting a session of its profile; an example in the open empty session switching it; the title whole with a panel open; code coloured only in a known language; the meter off 0 % after a stop. Phone: each session’s profile and time whole in the drawer', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    hearth.llm.respondWith(fakeLlmStep);
    const page = await browser.openPage(hearth, { viewport: desktop });
    await waitForApp(page);

    await cardsStartSession(page, hearth);
    await exampleInOpenSession(page, hearth);
    await titleWholeWithPanel(page, hearth);
    await codeColouredByLanguage(page, hearth);
    await meterAfterStop(page, hearth);

    // The phone drawer shows each session's profile and time whole.
    const sessionId = await hearth.createSession('secretary');
    hearth.llm.script({ content: 'Noted.' });
    expect((await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Remember the milk' })).status).toBe(200);
    const onPhone = await browser.openPage(hearth, { hash: sessionId, viewport: phone });
    await waitForApp(onPhone);
    const row = onPhone.locator(`${sel.sessionItem}[data-session-id="${sessionId}"]`);
    // Opening the session from the hash closes the drawer: open it once the session is open.
    await row.locator('.session-link[aria-current="page"]').waitFor({ state: 'attached' });
    await onPhone.locator(sel.openSessions).click();
    await row.locator('.session-meta').waitFor({ state: 'visible' });
    await screenshot(onPhone, 'drawer-session-time');
    expect(await row.locator('.session-meta').innerText()).toMatch(/^Personal Secretary · \S+/);
    expect(await isCut(onPhone, `${sel.sessionItem}[data-session-id="${sessionId}"] .session-meta`)).toBe(false);
    const meta = (await row.locator('.session-meta').boundingBox())!;
    const actions = (await row.locator('.session-actions').boundingBox())!;
    expect(await row.locator('.session-actions button').first().isVisible()).toBe(true);
    // The row's buttons stay clear of the line with the time.
    expect(actions.y + actions.height).toBeLessThanOrEqual(meta.y + 1);
  });
});
