/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { describe, expect, it } from 'vitest';
import { browserTest, lastAnswerText, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';

describe.skipIf(skipBrowserTests)('connection in the browser', () => {
  const browser = useBrowser();

  it('shows the Disconnected banner while the server is down and recovers on the same port without duplicating history', browserTest, async () => {
    const server = await browser.restartable();
    const llm = server.llm;
    const first = await server.start();
    llm.script({ content: 'Before the restart.' });
    const sessionId = await first.createSession();
    const page = await browser.openPage(first, { hash: sessionId });
    await waitForApp(page);
    const banner = page.locator(sel.banner);
    await sendMessage(page, 'Hello before');
    await waitForAnswer(page, 'Before the restart.');
    await waitForIdle(page);
    expect(await banner.isVisible()).toBe(false);

    // While the server is down the browser logs the refused reconnection attempts, and a request
    // in flight as it closes is reset.
    browser.allowErrors(/WebSocket connection to .* failed|ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|Failed to fetch/);
    await first.close();
    await banner.waitFor({ state: 'visible' });
    expect((await banner.innerText()).trim()).toMatch(/^Disconnected/);
    await screenshot(page, 'connection-banner-disconnected');

    const second = await server.start();
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

  it('resynchronises after the socket drops mid-run: the answer ends whole, with no text lost or shown twice', browserTest, async () => {
    const hearth = await browser.hearth();
    const chunks = Array.from({ length: 100 }, (_, index) => `part${index} `);
    const expected = chunks.join('').trim();
    hearth.llm.script({ chunks, delayMs: 40 });
    const { page } = await browser.openSession(hearth);
    await sendMessage(page, 'Stream through a network blip');
    await page.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? '').includes('part10 '), sel.assistant);

    // The server cuts every socket (as a proxy or a flaky network would); the run itself goes on.
    let dropped = 0;
    for (const client of hearth.app.websocketServer.clients) {
      client.terminate();
      dropped += 1;
    }
    // The session's socket and the page's events socket.
    expect(dropped).toBe(2);
    await page.locator(sel.banner).waitFor({ state: 'visible' });
    await page.locator(sel.banner).waitFor({ state: 'hidden' });
    // Reconnected while the model was still streaming: the page picks the run up from the server's replay.
    expect(hearth.llm.requests[0]!.completed).toBe(false);

    await waitForAnswer(page, expected);
    await waitForIdle(page);
    expect(await page.locator(sel.user).count()).toBe(1);
    expect(await page.locator(sel.assistant).count()).toBe(1);
    const text = await lastAnswerText(page);
    expect(text.match(/part10 /g)).toHaveLength(1);
    expect(text).toBe(expected);
  });
});
