/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { describe, expect, it } from 'vitest';
import { browserTest, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';
import { unusedPort } from '../support/llm-helpers.ts';

const status = '.session-header .backend-status';
const banner = '#backend-banner';

describe.skipIf(skipBrowserTests)('backend status in the browser', () => {
  const browser = useBrowser();

  it('the header names the backend and model and says they are reachable; no banner', browserTest, async () => {
    const hearth = await browser.hearth({ env: { OLLAMA_DEFAULT_MODEL: 'fake' } });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator(status, { hasText: 'reachable' }).waitFor();
    expect(await page.locator(status).textContent()).toBe('Ollama · fake · reachable');
    expect(await page.locator(status).getAttribute('data-state')).toBe('reachable');
    expect(await page.locator(banner).isHidden()).toBe(true);
  });

  it('an unreachable backend shows a banner with the fix, its command as code', browserTest, async () => {
    const port = await unusedPort();
    const hearth = await browser.hearth({ env: { OLLAMA_HOST: `http://127.0.0.1:${port}`, OLLAMA_DEFAULT_MODEL: 'fake' } });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator(status, { hasText: 'unreachable' }).waitFor();
    expect(await page.locator(status).textContent()).toBe('Ollama · fake · unreachable');
    await page.locator(banner).waitFor();
    const text = await page.locator(banner).textContent();
    expect(text).toContain(`Cannot reach Ollama at http://127.0.0.1:${port}`);
    expect(text).toContain('Start Ollama (ollama serve) or set OLLAMA_HOST.');
    expect(text).not.toContain('`');
    expect(await page.locator(`${banner} code`).allTextContents()).toEqual(['ollama serve']);

  });

  it('a missing model shows the pull command; the banner goes, live, once a check finds the model', browserTest, async () => {
    const hearth = await browser.hearth({ env: { OLLAMA_DEFAULT_MODEL: 'qwen3:8b' } });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator(status, { hasText: 'model missing' }).waitFor();
    expect(await page.locator(status).textContent()).toBe('Ollama · qwen3:8b · model missing');
    expect(await page.locator(`${banner} code`).allTextContents()).toEqual(['ollama pull qwen3:8b']);

    // The scripted Ollama lists every model it was asked for, as if it had been pulled.
    hearth.llm.script({ content: 'ok' });
    await hearth.request('POST', `/sessions/${await hearth.createSession()}/messages`, { content: 'pull it' });
    await hearth.app.backendStatus.check();
    await page.locator(`${status}[data-state="reachable"]`).waitFor();
    await page.locator(banner).waitFor({ state: 'hidden' });
    expect(await page.locator(status).textContent()).toBe('Ollama · qwen3:8b · reachable');
  });

  it('an LLM error in the transcript shows its inline code as code, escaped, and Retry answers the same message again', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script(
      { status: 404, errorMessage: 'model "<b>big</b>" not found, try pulling it first' },
      { content: 'Here it is after all.' },
    );
    const sessionId = await hearth.createSession();
    const page = await browser.openPage(hearth, { hash: sessionId });
    await waitForApp(page);
    await waitForIdle(page);
    await sendMessage(page, 'Tell me a story');
    const error = page.locator(sel.error);
    await error.waitFor();
    await waitForIdle(page);
    const text = await error.textContent();
    expect(text).not.toContain('`');
    expect(await error.locator('code').allTextContents()).toEqual(['ollama pull <b>big</b>']);
    expect(await error.locator('b').count()).toBe(0);

    const retry = error.locator('button[aria-label="Retry"]');
    expect(await retry.isVisible()).toBe(true);
    await retry.click();
    await waitForAnswer(page, 'Here it is after all.');
    await waitForIdle(page);
    expect(hearth.llm.requests).toHaveLength(2);
    const questions = hearth.llm.requests.map((request) => request.body.messages.filter((message: any) => message.role === 'user').map((message: any) => message.content));
    expect(questions).toEqual([['Tell me a story'], ['Tell me a story']]);
    const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
    expect(body.messages.filter((message: any) => message.role === 'user')).toHaveLength(1);
  });
});
