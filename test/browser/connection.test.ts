/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { browserTest, lastAnswerText, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';

describe.skipIf(skipBrowserTests)('connection in the browser', () => {
  const browser = useBrowser();

  it('shows the Disconnected banner while the server is down and recovers on the same port without duplicating history', browserTest, async () => {
    const llm = await startScriptedOllama();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-browser-restart-'));
    onTestFinished(async () => {
      await llm.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    const first = await browser.hearth({ llm, dataDir });
    const port = Number(new URL(first.baseUrl).port);
    llm.script({ content: 'Before the restart.' });
    const sessionId = await first.createSession();
    const page = await browser.openPage(first, { hash: sessionId });
    await waitForApp(page);
    const banner = page.locator(sel.banner);
    await sendMessage(page, 'Hello before');
    await waitForAnswer(page, 'Before the restart.');
    await waitForIdle(page);
    expect(await banner.isVisible()).toBe(false);

    // While the server is down the browser logs the refused reconnection attempts.
    browser.allowErrors(/WebSocket connection to .* failed|ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|Failed to fetch/);
    await first.close();
    await banner.waitFor({ state: 'visible' });
    expect((await banner.innerText()).trim()).toMatch(/^Disconnected/);
    await screenshot(page, 'connection-banner-disconnected');

    const second = await browser.hearth({ llm, dataDir, port });
    expect(second.baseUrl).toBe(first.baseUrl);
    await banner.waitFor({ state: 'hidden', timeout: 30_000 });
    expect(await page.locator(sel.user).count()).toBe(1);
    expect(await page.locator(sel.assistant).count()).toBe(1);
    expect(await lastAnswerText(page)).toBe('Before the restart.');

    llm.script({ content: 'After the restart.' });
    await sendMessage(page, 'Hello after');
    await waitForAnswer(page, 'After the restart.');
    await waitForIdle(page);
    expect(await page.locator(sel.user).count()).toBe(2);
    expect(await page.locator(sel.assistant).count()).toBe(2);
    const { body } = await second.request('GET', `/sessions/${sessionId}`);
    expect(body.messages.map((message: any) => message.content)).toEqual(['Hello before', 'Before the restart.', 'Hello after', 'After the restart.']);
  });
});
