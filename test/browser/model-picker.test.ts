/// <reference lib="dom" />
// The model picker beside the session's profile (docs/configuration.md, "Model backends"): it lists what the
// backend has, pins the chosen model for the session's next request, remembers it across a reload,
// and goes back to the profile's model.
import { describe, expect, it, onTestFinished } from 'vitest';
import { browserTest, screenshot, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForIdle } from '../support/browser.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';

const picker = 'select[aria-label="Session model"]';

describe.skipIf(skipBrowserTests)('the model picker', () => {
  const browser = useBrowser();

  it('lists the backend\'s models, and the next request carries the one picked, remembered across a reload', browserTest, async () => {
    const llm = await startScriptedOllama({ models: ['qwen3:8b', 'llama3.2:3b'] });
    onTestFinished(() => llm.close());
    const hearth = await browser.hearth({ llm, env: { OLLAMA_DEFAULT_MODEL: 'fake:latest' } });
    const { page, sessionId } = await browser.openSession(hearth, 'secretary');
    const select = page.locator(picker);
    await select.locator('option[value="llama3.2:3b"]').waitFor({ state: 'attached' });
    const options = await select.locator('option').evaluateAll((items) => items.map((item) => [(item as HTMLOptionElement).value, item.textContent]));
    expect(options[0]).toEqual(['', 'Profile’s model (fake:latest)']);
    expect(options.map(([value]) => value)).toEqual(expect.arrayContaining(['fake:latest', 'qwen3:8b', 'llama3.2:3b']));
    expect(await select.inputValue()).toBe('');
    // Beside the profile select, in the header.
    expect(await page.locator(`#session-profile + ${picker}`).count()).toBe(1);

    await select.selectOption('llama3.2:3b');
    await expect.poll(async () => (await hearth.request('GET', `/sessions/${sessionId}`)).body.model).toBe('llama3.2:3b');
    llm.script({ content: 'Answered by the small one.' });
    const before = llm.requests.length;
    await sendMessage(page, 'Which model are you?');
    await waitForAnswer(page, 'Answered by the small one.');
    await waitForIdle(page);
    const chats = llm.requests.slice(before).filter((request) => Array.isArray(request.body?.messages));
    expect(chats.at(-1)!.body.model).toBe('llama3.2:3b');
    await screenshot(page, 'model-picker');

    await page.reload();
    await page.locator(`${picker} option[value="llama3.2:3b"]`).waitFor({ state: 'attached' });
    await expect.poll(() => page.locator(picker).inputValue()).toBe('llama3.2:3b');

    await page.locator(picker).selectOption('');
    await expect.poll(async () => (await hearth.request('GET', `/sessions/${sessionId}`)).body.model).toBeNull();
  });
});
