/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserTest, lastAnswerText, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';
import type { Hearth } from '../support/hearth-server.ts';

const currentAnswers = `${sel.assistant}:not(.previous-version *)`;
const currentQuestions = `${sel.user}:not(.previous-version *)`;

describe.skipIf(skipBrowserTests)('message actions in the browser', () => {
  const browser = useBrowser();

  async function open(hearth: Hearth): Promise<{ page: Page; sessionId: string }> {
    const sessionId = await hearth.createSession();
    const page = await browser.openPage(hearth, { hash: sessionId, permissions: ['clipboard-read', 'clipboard-write'] });
    await waitForApp(page);
    await waitForIdle(page);
    return { page, sessionId };
  }

  it('copies an answer as written, to the clipboard', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ content: 'Use **two** eggs.\n\n- flour\n- milk' });
    const { page } = await open(hearth);
    await sendMessage(page, 'Pancake recipe?');
    await waitForAnswer(page, 'Use two eggs. flour milk');
    await waitForIdle(page);

    await page.locator(`${sel.assistant} button[aria-label="Copy answer"]`).click();
    await page.locator(`${sel.assistant} button[aria-label="Copy answer"]`, { hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('Use **two** eggs.\n\n- flour\n- milk');
  });

  it('shows no Copy under a round that holds only reasoning, live and after a reload', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script(
      { thinking: 'The list first.', toolCalls: [{ name: 'todo', arguments: { action: 'set', items: ['Flour'] } }] },
      { content: 'Noted: flour.' },
    );
    const { page, sessionId } = await open(hearth);
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
    const reloaded = await browser.openPage(hearth, { hash: sessionId });
    await waitForApp(reloaded);
    await waitForAnswer(reloaded, 'Noted: flour.');
    expect(await copyButtons(reloaded)).toEqual(expected);
  });

  it('regenerates the last answer: the new one shows, the old one folds behind "previous version"', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ content: 'Tuesday.' }, { content: 'Wednesday, actually.' });
    const { page, sessionId } = await open(hearth);
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
  });

  it('edits a message sent from this page and resends it; the old branch stays folded and the model never sees it', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ content: 'Paris it is.' }, { content: 'Rome it is.' });
    const { page } = await open(hearth);
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
  });

  it('switches the open session\'s profile from the header and leaves a marker that survives a reload', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ content: 'Hello there.' });
    const { page, sessionId } = await open(hearth);
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
  });
});

/** The user messages of the last request the scripted LLM received. */
function lastRequestQuestions(hearth: Hearth): string[] {
  return hearth.llm.requests.at(-1)!.body.messages.filter((message: any) => message.role === 'user').map((message: any) => message.content);
}
