/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Chat in the browser, each behaviour in a session of its own, walked in one page of one server (the
// tabs' check opens two more pages on its session); the unreachable model needs a server of its own.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  lastAnswerText,
  sel,
  screenshot,
  sendMessage,
  showSession,
  skipBrowserTests,
  useBrowser,
  waitForAnswer,
  waitForApp,
  waitForIdle,
} from '../support/browser.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { freeLoopbackPort } from '../support/loopback-port.ts';
import type { RecordedRequest } from '../support/scripted-llm.ts';

/** Counts of user and assistant items in the page's transcript. */
async function itemCounts(page: Page): Promise<{ user: number; assistant: number }> {
  return { user: await page.locator(sel.user).count(), assistant: await page.locator(sel.assistant).count() };
}

/** The first request from index `from` on whose connection the client dropped (a stopped stream). */
function disconnectFrom(hearth: Hearth, from: number): Promise<RecordedRequest> {
  const already = hearth.llm.requests.slice(from).find((request) => request.disconnected);
  if (already) return Promise.resolve(already);
  return new Promise((resolve) => hearth.llm.on('disconnect', (request) => hearth.llm.requests.indexOf(request) >= from && resolve(request)));
}

type AnswerState = { text: string; streaming: string | undefined };

/**
 * Records what the last answer shows, and whether it is marked streaming, at every change of the
 * transcript (sampling could miss a short-lived state on a busy machine); the returned function
 * stops recording and gives the states seen.
 */
async function recordAnswerStates(page: Page): Promise<() => Promise<AnswerState[]>> {
  type Recording = { states: AnswerState[]; observer: MutationObserver };
  await page.evaluate((selector) => {
    const states: AnswerState[] = [];
    const observer = new MutationObserver(() => {
      const items = document.querySelectorAll<HTMLElement>(selector);
      const last = items[items.length - 1];
      states.push({ text: last?.textContent ?? '', streaming: last?.dataset.streaming });
    });
    observer.observe(document.getElementById('transcript')!, { subtree: true, childList: true, characterData: true, attributes: true });
    (window as unknown as { answerRecording: Recording }).answerRecording = { states, observer };
  }, sel.assistant);
  return () =>
    page.evaluate(() => {
      const { states, observer } = (window as unknown as { answerRecording: Recording }).answerRecording;
      observer.disconnect();
      return states;
    });
}

/** Sends on Enter, shows the user item, streams the answer and swaps Send for Stop during the run. */
async function sendAndStream(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession();
  await showSession(page, sessionId);
  const chunks = ['The ', 'kettle ', 'is ', 'on, ', 'and ', 'the ', 'tea ', 'is ', 'ready.'];
  hearth.llm.script({ chunks, delayMs: 120 });
  expect(await page.locator(sel.send).isVisible()).toBe(true);
  expect(await page.locator(sel.stop).count()).toBe(0);

  const answerStates = await recordAnswerStates(page);
  await sendMessage(page, 'Is the tea ready?');
  await page.locator(sel.user).filter({ hasText: 'Is the tea ready?' }).waitFor();
  await page.locator(sel.stop).waitFor({ state: 'visible' });
  expect(await page.locator(sel.send).count()).toBe(0);
  expect(await page.locator(sel.message).isDisabled()).toBe(true);

  // A partial answer is on screen, marked streaming, before the whole one: the text grows as the deltas arrive.
  await waitForAnswer(page, chunks.join(''));
  expect((await answerStates()).some(({ text, streaming }) => text.includes('kettle') && !text.includes('ready.') && streaming === 'true')).toBe(true);
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
}

/** Shift+Enter inserts a newline instead of sending (nothing reaches the model until Enter). */
async function shiftEnterNewline(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession();
  await showSession(page, sessionId);
  hearth.llm.script({ content: 'Two lines received.' });
  const requestsBefore = hearth.llm.requests.length;
  const box = page.locator(sel.message);
  await box.click();
  await box.pressSequentially('first line');
  await box.press('Shift+Enter');
  await box.pressSequentially('second line');
  expect(await box.inputValue()).toBe('first line\nsecond line');
  expect(hearth.llm.requests).toHaveLength(requestsBefore);
  expect(await page.locator(sel.user).count()).toBe(0);

  await box.press('Enter');
  await waitForAnswer(page, 'Two lines received.');
  expect(await box.inputValue()).toBe('');
  const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
  expect(body.messages[0]).toMatchObject({ role: 'user', content: 'first line\nsecond line' });
  expect(await page.locator(sel.user).innerText()).toContain('second line');
  await waitForIdle(page);
}

/** A hanging stream stops with the Stop button or Escape: the answer is marked stopped and the composer freed. */
async function stopsHangingStream(page: Page, hearth: Hearth, how: 'the Stop button' | 'Escape'): Promise<void> {
  const sessionId = await hearth.createSession();
  await showSession(page, sessionId);
  hearth.llm.script({ chunks: ['Once ', 'upon ', 'a time'], hang: true }, { content: 'Next answer.' });
  const requestsBefore = hearth.llm.requests.length;
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
  const disconnected = await disconnectFrom(hearth, requestsBefore);
  expect(disconnected.completed).toBe(false);
  const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
  expect(body.running).toBe(false);
  expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Once upon a time', stopped: true });

  await sendMessage(page, 'And now?');
  await waitForAnswer(page, 'Next answer.');
  expect(await itemCounts(page)).toEqual({ user: 2, assistant: 2 });
  expect(await page.locator(`${sel.assistant}[data-stopped="true"]`).count()).toBe(1);
  await waitForIdle(page);
}

/** An LLM HTTP 500 shows inline as an error item with its message and code; the next message works. */
async function httpErrorInline(page: Page, hearth: Hearth): Promise<void> {
  await showSession(page, await hearth.createSession());
  hearth.llm.script({ status: 500, errorMessage: 'the model ran out of memory' }, { content: 'Recovered.' });
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
  await waitForIdle(page);
}

describe.skipIf(skipBrowserTests)('chat in the browser: send and stream', () => {
  const browser = useBrowser();

  it('in one page, each in its own session: sends on Enter and streams with Stop for Send; Shift+Enter is a newline; a hanging stream stops with the Stop button and with Escape; an LLM HTTP 500 inline; then a second tab, and a third joining mid-run, follow the run without duplicates', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    const first = await browser.openPage(hearth);
    await waitForApp(first);

    await sendAndStream(first, hearth);
    await shiftEnterNewline(first, hearth);
    await stopsHangingStream(first, hearth, 'the Stop button');
    await stopsHangingStream(first, hearth, 'Escape');
    await httpErrorInline(first, hearth);

    // Tabs: the walk's page is the first; two more open on its session.
    const chunks = Array.from({ length: 40 }, (_, index) => `word${index} `);
    const expected = chunks.join('').trim();
    hearth.llm.script({ chunks, delayMs: 60 }, { content: 'Second answer.' });
    const sessionId = await hearth.createSession();
    await showSession(first, sessionId);
    const second = await browser.openPage(hearth, { hash: sessionId });
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

  it('shows an unreachable LLM inline as an error naming its URL', { timeout: 60_000 }, async () => {
    // An address nothing listens on (the kernel just gave its port out and took it back).
    const deadUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
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
});
