/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  browserTest,
  lastAnswerText,
  sel,
  screenshot,
  sendMessage,
  skipBrowserTests,
  useBrowser,
  waitForAnswer,
  waitForApp,
  waitForIdle,
} from '../support/browser.ts';
import { startHearth } from '../support/hearth-server.ts';

/** Counts of user and assistant items in the page's transcript. */
async function itemCounts(page: Page): Promise<{ user: number; assistant: number }> {
  return { user: await page.locator(sel.user).count(), assistant: await page.locator(sel.assistant).count() };
}

describe.skipIf(skipBrowserTests)('chat in the browser: send and stream', () => {
  const browser = useBrowser();

  it('sends on Enter, shows the user item, streams the answer and swaps Send for Stop during the run', browserTest, async () => {
    const hearth = await browser.hearth();
    const chunks = ['The ', 'kettle ', 'is ', 'on, ', 'and ', 'the ', 'tea ', 'is ', 'ready.'];
    hearth.llm.script({ chunks, delayMs: 120 });
    const { page, sessionId } = await browser.openSession(hearth);
    expect(await page.locator(sel.send).isVisible()).toBe(true);
    expect(await page.locator(sel.stop).count()).toBe(0);

    await sendMessage(page, 'Is the tea ready?');
    await page.locator(sel.user).filter({ hasText: 'Is the tea ready?' }).waitFor();
    await page.locator(sel.stop).waitFor({ state: 'visible' });
    expect(await page.locator(sel.send).count()).toBe(0);
    expect(await page.locator(sel.message).isDisabled()).toBe(true);

    // A partial answer is on screen before the whole one: the text grows as the deltas arrive.
    await page.waitForFunction(
      (selector) => {
        const items = document.querySelectorAll(selector);
        const text = items[items.length - 1]?.textContent ?? '';
        return text.includes('kettle') && !text.includes('ready.');
      },
      sel.assistant,
      { polling: 'raf' },
    );
    expect(await page.locator(`${sel.assistant}[data-streaming="true"]`).count()).toBe(1);
    await waitForAnswer(page, chunks.join(''));
    await waitForIdle(page);
    expect(await page.locator(sel.stop).count()).toBe(0);
    expect(await itemCounts(page)).toEqual({ user: 1, assistant: 1 });
    expect(await page.locator(`${sel.assistant}[data-streaming="true"]`).count()).toBe(0);
    expect(await lastAnswerText(page)).toBe('The kettle is on, and the tea is ready.');

    const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
    expect(body.messages.map((message: any) => [message.role, message.content])).toEqual([
      ['user', 'Is the tea ready?'],
      ['assistant', 'The kettle is on, and the tea is ready.'],
    ]);
    // The session was titled from its first message; the header follows without a reload.
    expect(body.title).toBe('Is the tea ready?');
    await page.waitForFunction(
      ({ selector, title }) => document.querySelector(selector)?.textContent?.trim() === title,
      { selector: sel.sessionTitle, title: body.title },
    ).catch(async (error) => {
      throw new Error(`#session-title shows ${JSON.stringify(await page.locator(sel.sessionTitle).textContent())}, expected ${JSON.stringify(body.title)}\n${String(error)}`);
    });
  });

  it('inserts a newline on Shift+Enter instead of sending', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ content: 'Two lines received.' });
    const { page, sessionId } = await browser.openSession(hearth);
    const box = page.locator(sel.message);
    await box.click();
    await box.pressSequentially('first line');
    await box.press('Shift+Enter');
    await box.pressSequentially('second line');
    expect(await box.inputValue()).toBe('first line\nsecond line');
    expect(hearth.llm.requests).toHaveLength(0);
    expect(await page.locator(sel.user).count()).toBe(0);

    await box.press('Enter');
    await waitForAnswer(page, 'Two lines received.');
    expect(await box.inputValue()).toBe('');
    const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
    expect(body.messages[0]).toMatchObject({ role: 'user', content: 'first line\nsecond line' });
    expect(await page.locator(sel.user).innerText()).toContain('second line');
  });

  for (const how of ['the Stop button', 'Escape'] as const) {
    it(`stops a hanging stream with ${how}, marks the answer stopped and frees the composer`, browserTest, async () => {
      const hearth = await browser.hearth();
      hearth.llm.script({ chunks: ['Once ', 'upon ', 'a time'], hang: true }, { content: 'Next answer.' });
      const { page, sessionId } = await browser.openSession(hearth);
      await sendMessage(page, 'Tell me a long story');
      await waitForAnswer(page, 'Once upon a time');
      await page.locator(sel.stop).waitFor({ state: 'visible' });

      if (how === 'Escape') await page.keyboard.press('Escape');
      else await page.locator(sel.stop).click();

      const stopped = page.locator(`${sel.assistant}[data-stopped="true"]`);
      await stopped.waitFor();
      expect(await stopped.innerText()).toMatch(/Stopped/);
      if (how === 'Escape') await screenshot(page, 'chat-stopped');
      await waitForIdle(page);
      expect(await page.locator(sel.stop).count()).toBe(0);
      expect(await page.locator(`${sel.assistant}[data-streaming="true"]`).count()).toBe(0);
      expect(await lastAnswerText(page)).toContain('Once upon a time');
      const disconnected = await hearth.llm.waitForDisconnect();
      expect(disconnected.completed).toBe(false);
      const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
      expect(body.running).toBe(false);
      expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Once upon a time', stopped: true });

      await sendMessage(page, 'And now?');
      await waitForAnswer(page, 'Next answer.');
      expect(await itemCounts(page)).toEqual({ user: 2, assistant: 2 });
      expect(await page.locator(`${sel.assistant}[data-stopped="true"]`).count()).toBe(1);
    });
  }

  it('shows an LLM HTTP 500 inline as an error item with its message and code', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ status: 500, errorMessage: 'the model ran out of memory' }, { content: 'Recovered.' });
    const { page } = await browser.openSession(hearth);
    await sendMessage(page, 'Hello?');
    const error = page.locator(sel.error);
    await error.waitFor();
    expect(await error.innerText()).toContain('the model ran out of memory');
    expect(await error.getAttribute('data-code')).toBe('llm_error');
    await screenshot(page, 'chat-error-inline');
    await waitForIdle(page);

    await sendMessage(page, 'Try again');
    await waitForAnswer(page, 'Recovered.');
    expect(await page.locator(sel.error).count()).toBe(1);
  });

  it('shows an unreachable LLM inline as an error naming its URL', browserTest, async () => {
    const probe = await startHearth();
    const deadUrl = probe.llm.url;
    await probe.close();
    const hearth = await browser.hearth({ env: { OLLAMA_HOST: deadUrl } });
    // The model picker asks the dead backend for its models: Chromium logs the 502 it gets.
    browser.allowErrors(/status of 502 .*\/models/);
    const { page } = await browser.openSession(hearth);
    await sendMessage(page, 'Anyone there?');
    const error = page.locator(sel.error);
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('llm_unreachable');
    const text = await error.innerText();
    expect(text).toContain(deadUrl);
    expect(text).toMatch(/ollama serve/);
    await waitForIdle(page);
    expect(await page.locator(sel.user).count()).toBe(1);
  });

  it('lets a second tab on the same session, and a third joining mid-run, follow the run without duplicates', browserTest, async () => {
    const hearth = await browser.hearth();
    const chunks = Array.from({ length: 40 }, (_, index) => `word${index} `);
    const expected = chunks.join('').trim();
    hearth.llm.script({ chunks, delayMs: 60 }, { content: 'Second answer.' });
    const sessionId = await hearth.createSession();
    const first = await browser.openPage(hearth, { hash: sessionId });
    const second = await browser.openPage(hearth, { hash: sessionId });
    await waitForApp(first);
    await waitForApp(second);
    // The second tab's socket is connected before the first one sends.
    await second.locator(sel.send).waitFor();

    await sendMessage(first, 'Tell both tabs');
    await second.locator(sel.stop).waitFor({ state: 'visible' });
    await second.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? '').includes('word5'), sel.assistant);
    const third = await browser.openPage(hearth, { hash: sessionId });
    await waitForApp(third);

    for (const page of [first, second, third]) {
      await waitForAnswer(page, expected);
      await waitForIdle(page);
    }
    for (const page of [first, second, third]) {
      expect(await itemCounts(page)).toEqual({ user: 1, assistant: 1 });
      expect(await page.locator(sel.user).innerText()).toContain('Tell both tabs');
      expect(await lastAnswerText(page)).toBe(expected);
    }

    await sendMessage(second, 'Now from the second tab');
    for (const page of [first, second, third]) await waitForAnswer(page, 'Second answer.');
    for (const page of [first, second, third]) {
      await waitForIdle(page);
      expect(await itemCounts(page)).toEqual({ user: 2, assistant: 2 });
    }
  });
});
