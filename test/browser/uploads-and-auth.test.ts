/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserTest, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';

/** A 2×2 red PNG. */
const pngBase64 = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4z8DwnwGMgRQAH+4D/dJQfRoAAAAASUVORK5CYII=';

describe.skipIf(skipBrowserTests)('uploads and sign-in in the browser', () => {
  const browser = useBrowser();

  it('attaches a text file and an image, sends them with the message and shows them in the user item', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ content: 'I see your notes and the red square.' });
    const { page, sessionId } = await browser.openSession(hearth);
    const notes = 'Buy oat milk.\nCall the plumber.\n';
    await page.locator(sel.files).setInputFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(notes) },
      { name: 'red.png', mimeType: 'image/png', buffer: Buffer.from(pngBase64, 'base64') },
    ]);
    const chips = page.locator('li[data-attachment]');
    await page.waitForFunction(() => document.querySelectorAll('li[data-attachment]').length === 2);
    expect(await chips.allTextContents()).toEqual([expect.stringContaining('notes.txt'), expect.stringContaining('red.png')]);
    expect(await page.locator('button[aria-label="Remove notes.txt"]').count()).toBe(1);
    await screenshot(page, 'upload-chips');

    await sendMessage(page, 'What do you make of these?');
    await waitForAnswer(page, 'I see your notes and the red square.');
    await waitForIdle(page);
    expect(await chips.count()).toBe(0);

    const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
    const user = body.messages.find((message: any) => message.role === 'user');
    expect(user.content).toContain('What do you make of these?');
    expect(user.content).toContain('Attached files:');
    expect(user.content).toContain('notes.txt');
    expect(user.images).toEqual([expect.stringMatching(new RegExp(`^/sessions/${sessionId}/images/[0-9a-f]+\\.png$`))]);
    const served = await fetch(hearth.baseUrl + user.images[0]);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).toString('base64')).toBe(pngBase64);
    // The text file landed on the server, byte for byte, where the message says it is.
    const stored = /^- notes\.txt: (.+)$/m.exec(user.content)?.[1]?.trim();
    expect(stored, user.content).toBeTruthy();
    const candidates = path.isAbsolute(stored!)
      ? [stored!]
      : [path.join(hearth.config.SESSION_FILES_DIR, sessionId, stored!), path.join(hearth.config.SESSION_FILES_DIR, stored!)];
    const contents = await Promise.all(candidates.map((file) => readFile(file, 'utf8').catch(() => undefined)));
    expect(contents).toContain(notes);
    // The model received the image.
    const lastUser = hearth.llm.requests[0]!.body.messages.findLast((message: any) => message.role === 'user');
    expect(lastUser.images).toHaveLength(1);

    const item = page.locator(sel.user);
    expect(await item.textContent()).toContain('notes.txt');
    expect(await item.locator('img').count()).toBe(1);
    await screenshot(page, 'upload-user-item');
    await page.reload();
    await waitForApp(page);
    await waitForAnswer(page, 'I see your notes and the red square.');
    expect(await page.locator(sel.user).textContent()).toContain('notes.txt');
    expect(await page.locator(`${sel.user} img`).count()).toBe(1);
  });

  it('asks for the access token, refuses a wrong one and streams over the socket after the right one', browserTest, async () => {
    const hearth = await browser.hearth({ env: { AUTH_TOKEN: 'secret-token' } });
    const auth = { authorization: 'Bearer secret-token' };
    const created = await hearth.request('POST', '/sessions', {}, auth);
    expect(created.status).toBe(201);
    const sessionId = created.body.session_id as string;
    hearth.llm.script({ chunks: ['Signed ', 'in ', 'and ', 'streaming.'], delayMs: 40 });

    // Unauthorised API calls (and a refused socket) show up as 401s in the console.
    const page = await browser.openPage(hearth, { hash: sessionId, allowErrors: [/\b401\b/] });
    const form = page.locator(sel.signIn);
    await form.waitFor({ state: 'visible' });
    const token = form.locator(sel.accessToken);
    expect(await token.getAttribute('type')).toBe('password');

    await token.fill('wrong-token');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForFunction(
      (selector) => {
        const formElement = document.querySelector(selector);
        return formElement !== null && /invalid|wrong|incorrect|not accepted|refused|denied|unauthori[sz]ed|401/i.test(formElement.textContent ?? '');
      },
      sel.signIn,
    );
    expect(await form.isVisible()).toBe(true);
    expect(await page.locator(sel.message).isVisible()).toBe(false);
    await screenshot(page, 'sign-in-wrong-token');

    await token.fill('secret-token');
    await token.press('Enter');
    await form.waitFor({ state: 'hidden' });
    await waitForApp(page);
    const cookies = await page.context().cookies();
    expect(cookies.find((cookie) => cookie.name === 'token')).toMatchObject({ value: 'secret-token', path: '/', sameSite: 'Strict' });

    await sendMessage(page, 'Am I in?');
    await waitForAnswer(page, 'Signed in and streaming.');
    await waitForIdle(page);
    const { body } = await hearth.request('GET', `/sessions/${sessionId}`, undefined, auth);
    expect(body.messages.map((message: any) => message.content)).toEqual(['Am I in?', 'Signed in and streaming.']);

    // The cookie keeps the page signed in across a reload.
    await page.reload();
    await waitForApp(page);
    await waitForAnswer(page, 'Signed in and streaming.');
    expect(await page.locator(sel.signIn).isVisible()).toBe(false);
  });

  it('asks for the new token when the server restarts with another AUTH_TOKEN, then reopens the session', browserTest, async () => {
    const server = await browser.restartable();
    const llm = server.llm;
    const first = await server.start({ AUTH_TOKEN: 'old-token' });
    const created = await first.request('POST', '/sessions', {}, { authorization: 'Bearer old-token' });
    const sessionId = created.body.session_id as string;
    llm.script({ content: 'Before the new token.' });
    await first.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' }, { authorization: 'Bearer old-token' });

    browser.allowErrors(/\b401\b|WebSocket connection to .* failed|ERR_CONNECTION_REFUSED|Failed to fetch/);
    const page = await browser.openPage(first, { hash: sessionId });
    const form = page.locator(sel.signIn);
    await form.locator(sel.accessToken).fill('old-token');
    await form.locator(sel.accessToken).press('Enter');
    await waitForAnswer(page, 'Before the new token.');
    expect(await form.isVisible()).toBe(false);

    await first.close();
    const second = await server.start({ AUTH_TOKEN: 'new-token' });
    await form.waitFor({ state: 'visible', timeout: 30_000 });
    expect(await page.locator(sel.message).isVisible()).toBe(false);
    await form.locator(sel.accessToken).fill('new-token');
    await form.locator(sel.accessToken).press('Enter');
    await form.waitFor({ state: 'hidden' });
    await waitForAnswer(page, 'Before the new token.');
    expect(await page.evaluate(() => location.hash)).toBe(`#${sessionId}`);

    llm.script({ content: 'After the new token.' });
    await sendMessage(page, 'Still there?');
    await waitForAnswer(page, 'After the new token.');
    await waitForIdle(page);
    expect(await page.locator(sel.user).count()).toBe(2);
    expect((await second.request('GET', `/sessions/${sessionId}`, undefined, { authorization: 'Bearer new-token' })).body.messages).toHaveLength(4);
  });
});
