/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Message actions, each in a session of its own, walked in one page of one server.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { lastAnswerText, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';
import type { Hearth } from '../support/hearth-server.ts';

const currentAnswers = `${sel.assistant}:not(.previous-version *)`;
const currentQuestions = `${sel.user}:not(.previous-version *)`;

/** Opens a new session in the walk's page, ready for input. */
async function open(page: Page, hearth: Hearth): Promise<string> {
  const sessionId = await hearth.createSession();
  await showSession(page, sessionId);
  await waitForIdle(page);
  return sessionId;
}

/** Copy puts the answer as written (Markdown) on the clipboard. */
async function copiesAsWritten(page: Page, hearth: Hearth): Promise<void> {
  hearth.llm.script({ content: 'Use **two** eggs.\n\n- flour\n- milk' });
  await open(page, hearth);
  await sendMessage(page, 'Pancake recipe?');
  await waitForAnswer(page, 'Use two eggs. flour milk');
  await waitForIdle(page);

  await page.locator(`${sel.assistant} button[aria-label="Copy answer"]`).click();
  await page.locator(`${sel.assistant} button[aria-label="Copy answer"]`, { hasText: 'Copied' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('Use **two** eggs.\n\n- flour\n- milk');
}

/** No Copy under a round that holds only reasoning, live and when the stored session is drawn again. */
async function noCopyUnderReasoning(page: Page, hearth: Hearth): Promise<void> {
  hearth.llm.script(
    { thinking: 'The list first.', toolCalls: [{ name: 'todo', arguments: { action: 'set', items: ['Flour'] } }] },
    { content: 'Noted: flour.' },
  );
  const sessionId = await open(page, hearth);
  await sendMessage(page, 'Add flour to my list');
  await waitForAnswer(page, 'Noted: flour.');
  await waitForIdle(page);
  const copyButtons = (target: Page) =>
    target.locator(sel.assistant).evaluateAll((items) =>
      items.map((item) => ({ reasoning: !(item.querySelector('.thinking') as HTMLElement).hidden, text: (item.querySelector('.markdown')?.textContent ?? '').trim(), copy: item.querySelector<HTMLElement>('.copy-answer')?.checkVisibility() ?? false })),
    );
  const expected = [
    { reasoning: true, text: '', copy: false },
    { reasoning: false, text: 'Noted: flour.', copy: true },
  ];
  expect(await copyButtons(page)).toEqual(expected);
  // Drawn again from the stored session: leave it for the new-session view and open it again (a new view reads it from the server).
  await page.evaluate(() => (location.hash = ''));
  await page.locator('#transcript .profile-card').first().waitFor();
  await showSession(page, sessionId);
  await waitForAnswer(page, 'Noted: flour.');
  expect(await copyButtons(page)).toEqual(expected);
}

/** Regenerate: the new answer shows, the old one folds behind "previous version". */
async function regenerates(page: Page, hearth: Hearth): Promise<void> {
  hearth.llm.script({ content: 'Tuesday.' }, { content: 'Wednesday, actually.' });
  const sessionId = await open(page, hearth);
  await sendMessage(page, 'Which day is bin day?');
  await waitForAnswer(page, 'Tuesday.');
  await waitForIdle(page);

  await page.locator(`${currentAnswers} button[aria-label="Regenerate answer"]`).click();
  await waitForAnswer(page, 'Wednesday, actually.');
  await waitForIdle(page);
  const folded = page.locator('#transcript .previous-version');
  await folded.waitFor({ state: 'attached' });
  expect(await folded.locator(':scope > summary').textContent()).toMatch(/previous version/i);
  expect(await folded.locator('[data-role="assistant"]').textContent()).toContain('Tuesday.');
  expect(await folded.evaluate((details: HTMLDetailsElement) => details.open)).toBe(false);
  expect(await page.locator(currentAnswers).count()).toBe(1);
  expect(await page.locator(`${sel.transcript} button[aria-label="Regenerate answer"]`).count()).toBe(1);
  expect(lastRequestQuestions(hearth)).toEqual(['Which day is bin day?']);
  const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
  expect(body.messages.map((message: any) => [message.content, message.superseded ?? false])).toEqual([
    ['Which day is bin day?', false],
    ['Tuesday.', true],
    ['Wednesday, actually.', false],
  ]);
}

/** A message sent from this page is edited and resent; the old branch stays folded and the model never sees it. */
async function editsAndResends(page: Page, hearth: Hearth): Promise<void> {
  hearth.llm.script({ content: 'Paris it is.' }, { content: 'Rome it is.' });
  await open(page, hearth);
  await sendMessage(page, 'Book a trip to Paris');
  await waitForAnswer(page, 'Paris it is.');
  await waitForIdle(page);

  await page.locator(`${currentQuestions} button[aria-label="Edit message"]`).click();
  const field = page.locator('textarea[aria-label="Edited message"]');
  expect(await field.inputValue()).toBe('Book a trip to Paris');
  await field.fill('Book a trip to Rome');
  await page.locator('button', { hasText: 'Save and resend' }).click();
  await waitForAnswer(page, 'Rome it is.');
  await waitForIdle(page);

  expect(await page.locator(currentQuestions).allTextContents()).toEqual([expect.stringContaining('Book a trip to Rome')]);
  expect(await page.locator('#transcript .previous-version [data-role="user"]').textContent()).toContain('Book a trip to Paris');
  expect(lastRequestQuestions(hearth)).toEqual(['Book a trip to Rome']);
  expect(await lastAnswerText(page)).toBe('Rome it is.');
}

/** The header switches the open session's profile and leaves a marker that survives a reload (a real one: last). */
async function profileSwitchMarker(page: Page, hearth: Hearth): Promise<void> {
  hearth.llm.script({ content: 'Hello there.' });
  const sessionId = await open(page, hearth);
  await sendMessage(page, 'Hi');
  await waitForAnswer(page, 'Hello there.');
  await waitForIdle(page);

  await page.locator(sel.sessionProfile).selectOption('server_admin');
  const marker = page.locator('#transcript [data-role="profile-switch"]');
  await marker.waitFor();
  expect(await marker.textContent()).toContain('Server Administrator');
  await waitForHeaderProfile(page, 'Server Administrator');
  expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('server_admin');

  await page.reload();
  await waitForApp(page);
  await page.locator('#transcript [data-role="profile-switch"]').waitFor();
  expect(await page.locator('#transcript [data-role="profile-switch"]').count()).toBe(1);
  await waitForHeaderProfile(page, 'Server Administrator');
}

describe.skipIf(skipBrowserTests)('message actions in the browser', () => {
  const browser = useBrowser();

  it('in one page, each in its own session: Copy as written; no Copy under a reasoning-only round, live and drawn again; Regenerate folds the old answer; edit and resend; the header’s profile switch leaves a marker that survives a reload', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    const page = await browser.openPage(hearth, { permissions: ['clipboard-read', 'clipboard-write'] });
    await waitForApp(page);

    await copiesAsWritten(page, hearth);
    await noCopyUnderReasoning(page, hearth);
    await regenerates(page, hearth);
    await editsAndResends(page, hearth);
    await profileSwitchMarker(page, hearth);
  });
});

/** The user messages of the last request the scripted LLM received. */
function lastRequestQuestions(hearth: Hearth): string[] {
  return hearth.llm.requests.at(-1)!.body.messages.filter((message: any) => message.role === 'user').map((message: any) => message.content);
}
