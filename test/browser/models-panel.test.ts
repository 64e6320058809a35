/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Models from the page (issue 36): the Models panel against an Ollama stand-in that pulls, shows,
// lists what is loaded and deletes as Ollama documents; pull progress on every page, through a
// reload, cancelled and failed; and the first run, where one click pulls the missing model.
import { once } from 'node:events';
import type { Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { expectNoViolations } from '../support/axe.ts';
import { browserTest, openPanel, screenshot, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForEventsSocket } from '../support/browser.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { OllamaModelLibrary } from '../support/ollama-model-library.ts';
import { addPerson } from '../support/people.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';

const pulls = '#model-pulls';
const pullOf = (name: string) => `${pulls} [data-model-pull="${name}"]`;
const modelItem = (name: string) => `aside.panel[aria-label="Models"] li[data-model="${name}"]`;

async function ollamaHearth(browser: ReturnType<typeof useBrowser>, library: OllamaModelLibrary): Promise<Hearth> {
  const llm = await startScriptedOllama({ library });
  onTestFinished(() => llm.close());
  return browser.hearth({ llm, env: { OLLAMA_DEFAULT_MODEL: 'qwen3:8b' } });
}

/** Every value the pull's bar takes from now on, recorded in the page (the bar may come and go between two polls). */
async function recordBarValues(page: Page): Promise<() => Promise<number[]>> {
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as any).pullValues = seen;
    const record = () => {
      for (const bar of document.querySelectorAll<HTMLProgressElement>('#model-pulls progress')) if (bar.hasAttribute('value')) seen.push(bar.value);
    };
    new MutationObserver(record).observe(document.querySelector('#model-pulls')!, { subtree: true, childList: true, attributes: true });
  });
  return () => page.evaluate(() => [...(window as any).pullValues]);
}

async function pullFromPanel(page: Page, name: string): Promise<void> {
  const form = page.locator('form[aria-label="Pull a model"]');
  await form.getByLabel('Model to pull').fill(name);
  await form.getByRole('button', { name: 'Pull' }).click();
}

describe.skipIf(skipBrowserTests)('models from the page', () => {
  const browser = useBrowser();

  it('the Models panel shows what each model can do and how it fits; a pull moves its bar, survives a reload, cancels and fails in words; a delete asks', { timeout: 90_000 }, async () => {
    const library = new OllamaModelLibrary({
      installed: [
        { name: 'qwen3:8b', family: 'qwen3', parameterSize: '8.2B', quantization: 'Q4_K_M', contextLength: 40_960, capabilities: ['completion', 'tools', 'thinking'], layers: [5_000_000_000, 12_000] },
        { name: 'gemma3:4b', family: 'gemma3', parameterSize: '4.3B', capabilities: ['completion', 'vision'], layers: [3_300_000_000] },
        { name: 'huge:405b', capabilities: ['completion', 'tools'], layers: [10 ** 15] },
      ],
      registry: [
        { name: 'big:7b', layers: [40_000_000, 20_000_000, 500] },
        { name: 'slow:1b', layers: [10_000_000] },
      ],
    });
    // big:7b waits after a few lines (the reload happens there), then goes on at a pace the page can follow.
    library.plan('big:7b', { steps: 8, holdAfter: 4, intervalMs: 25 });
    library.plan('slow:1b', { holdAfter: 2 });
    const hearth = await ollamaHearth(browser, library);
    library.load('qwen3:8b', 5_000_012_000);
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await waitForEventsSocket(page);
    const panel = await openPanel(page, 'Models');
    await page.locator(modelItem('huge:405b')).waitFor();

    // What each model is and can do, from /api/show; what is loaded, from /api/ps.
    const qwen = page.locator(modelItem('qwen3:8b'));
    expect(await qwen.locator('.model-meta').first().textContent()).toBe('5 GB · qwen3 · 8.2B parameters · Q4_K_M · 40,960 tokens of context');
    expect(await qwen.locator('.capability').evaluateAll((marks) => marks.map((mark) => [(mark as HTMLElement).dataset.capability, (mark as HTMLElement).dataset.supported]))).toEqual([
      ['tools', 'true'],
      ['thinking', 'true'],
      ['vision', 'false'],
    ]);
    expect(await qwen.locator('.model-default').textContent()).toBe('default');
    expect(await qwen.locator('[data-role="loaded"]').textContent()).toMatch(/^Loaded now, 5 GB in VRAM until \d/);
    const gemma = page.locator(modelItem('gemma3:4b'));
    expect(await gemma.locator('.capability[data-capability="tools"]').textContent()).toBe('✗ no tools');
    expect(await gemma.locator('[data-role="tools-refusal"]').textContent()).toBe('cannot call tools: not offered to profiles with tools');
    // A model that cannot call tools is not offered to a profile with tools.
    const secretaryOption = gemma.locator('select[aria-label="Make gemma3:4b a profile’s model"] option[value="secretary"]');
    expect(await secretaryOption.textContent()).toContain('(needs tools)');
    expect(await secretaryOption.isDisabled()).toBe(true);
    // Its size against the machine's memory.
    expect(await page.locator(modelItem('huge:405b')).getAttribute('data-fit')).toBe('too_big');
    expect(await page.locator(`${modelItem('huge:405b')} [data-role="fit"]`).textContent()).toMatch(/^too big for this machine’s memory \(1000000 GB of [\d.]+ GB\)$/);
    expect(await panel.locator('[data-role="machine-memory"]').textContent()).toMatch(/^This machine: [\d.]+ GB memory, [\d.]+ (GB|MB) free/);

    // A pull from the panel: its bar under the header, held mid-way by the stand-in.
    const held = once(library, 'held');
    await pullFromPanel(page, 'big:7b');
    await held;
    const bar = page.locator(`${pullOf('big:7b')} progress`);
    // Held after the manifest and three lines of the first layer (2 of its 8 steps): the last, throttled, update reaches the page.
    await expect.poll(() => bar.evaluate((node: HTMLProgressElement) => [node.value, node.max])).toEqual([10_000_000, 40_000_000]);
    expect(await bar.getAttribute('aria-label')).toBe('Pulling big:7b');
    expect(await page.locator(`${pullOf('big:7b')} [data-role="pull-status"]`).textContent()).toMatch(/^pulling [0-9a-f]{12} · \d+ MB of \d+ MB \(\d+%\)$/);
    const beforeReload = await bar.evaluate((node: HTMLProgressElement) => node.value);

    // A reload mid-pull shows it again, from hello's model_pulls.
    await page.reload();
    await waitForApp(page);
    await expect.poll(() => page.locator(`${pullOf('big:7b')} progress`).evaluate((node: HTMLProgressElement) => node.value)).toBe(beforeReload);
    const values = await recordBarValues(page);
    library.release('big:7b');
    // Done: the bar goes, and models_changed brings the model into the open panel.
    await page.locator(pullOf('big:7b')).waitFor({ state: 'detached' });
    const seen = await values();
    expect(new Set(seen).size, `the bar's values: ${seen.join(', ')}`).toBeGreaterThan(2);
    expect(seen.every((value, index) => index === 0 || value >= seen[index - 1]!), `the bar's values: ${seen.join(', ')}`).toBe(true);
    expect(library.has('big:7b')).toBe(true);
    await openPanel(page, 'Models');
    await page.locator(modelItem('big:7b')).waitFor();
    // The header's model picker lists it too.
    await page.locator('select[aria-label="Session model"] option[value="big:7b"]').waitFor({ state: 'attached' });

    // Cancel ends the pull at Ollama too (the request goes away).
    const slowHeld = once(library, 'held');
    await pullFromPanel(page, 'slow:1b');
    await slowHeld;
    const closed = once(library, 'closed');
    await page.getByRole('button', { name: 'Cancel pulling slow:1b' }).click();
    expect(await closed).toEqual(['slow:1b', true]);
    await page.locator(pullOf('slow:1b')).waitFor({ state: 'detached' });
    expect(library.has('slow:1b')).toBe(false);

    // A failed pull says why, until dismissed.
    await pullFromPanel(page, 'nosuch:1b');
    const failure = page.locator(`${pullOf('nosuch:1b')}[data-state="failed"]`);
    await failure.waitFor();
    expect(await failure.locator('[role="alert"]').textContent()).toBe('Could not pull nosuch:1b: Ollama has no model named nosuch:1b.');
    await screenshot(page, 'models-panel-failed-pull');

    // A delete asks first, naming who uses the model; Cancel keeps it.
    const dialog = page.locator('dialog.model-delete-dialog');
    await page.getByRole('button', { name: 'Delete qwen3:8b' }).click();
    await dialog.waitFor();
    const users = (await hearth.request('GET', '/models')).body.models.find((model: { name: string }) => model.name === 'qwen3:8b').used_by as string[];
    const profiles = (await hearth.request('GET', '/agents/profiles')).body.profiles as { id: string; name: string }[];
    const names = users.filter((id) => id !== 'default').map((id) => profiles.find((profile) => profile.id === id)!.name);
    expect(names.length).toBeGreaterThan(0);
    expect(await dialog.locator('p').textContent()).toBe(
      `Delete qwen3:8b from this machine? It is the default model. ${names.join(', ')} use it, and cannot answer until another model is set or it is pulled again.`,
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(library.has('qwen3:8b')).toBe(true);
    await page.getByRole('button', { name: 'Delete gemma3:4b' }).click();
    expect(await dialog.locator('p').textContent()).toBe('Delete gemma3:4b from this machine? No profile uses it.');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.locator(modelItem('gemma3:4b')).waitFor({ state: 'detached' });
    expect(library.has('gemma3:4b')).toBe(false);

    // The owner makes a model a profile's, and the default.
    await page.locator(modelItem('big:7b')).locator('select[aria-label="Make big:7b a profile’s model"]').selectOption('secretary');
    await expect.poll(async () => (await hearth.request('GET', '/agents/profiles')).body.profiles.find((profile: { id: string }) => profile.id === 'secretary').model).toBe('big:7b');
    await page.getByRole('button', { name: 'Set as default (big:7b)' }).click();
    await page.locator(`${modelItem('big:7b')} .model-default`).waitFor();
    expect((await hearth.request('GET', '/models')).body.default_model).toBe('big:7b');
    expect(await page.locator(`${modelItem('big:7b')} [data-role="used-by"]`).textContent()).toContain('Personal Secretary');

    // On a phone: nothing wider than the screen, and axe finds nothing in the open panel (and the failed pull above it).
    await page.setViewportSize({ width: 360, height: 760 });
    await page.locator(modelItem('big:7b')).waitFor();
    const overflow = await page.evaluate(() => {
      const aside = document.querySelector('aside.panel[aria-label="Models"]')!;
      return { page: document.documentElement.scrollWidth, panel: aside.scrollWidth - aside.clientWidth, pulls: document.querySelector('#model-pulls')!.scrollWidth };
    });
    expect(overflow).toEqual({ page: 360, panel: 0, pulls: expect.any(Number) });
    expect(overflow.pulls).toBeLessThanOrEqual(360);
    await expectNoViolations(page, 'the Models panel at 360 px');
    await screenshot(page, 'models-panel-phone');

    // Once people exist, only the owner pulls, deletes and chooses: another person's panel only lists.
    browser.allowErrors(/\b401\b/);
    const adult = await addPerson(hearth, { role: 'adult' });
    const adultPage = await browser.openPage(hearth);
    await adultPage.context().addCookies([{ name: 'hearth_session', value: adult.session, url: hearth.baseUrl }]);
    await adultPage.reload();
    await waitForApp(adultPage);
    const adultPanel = await openPanel(adultPage, 'Models');
    await adultPage.locator(modelItem('big:7b')).waitFor();
    expect(await adultPanel.locator('form[aria-label="Pull a model"]').count()).toBe(0);
    expect(await adultPanel.locator('.model-actions').count()).toBe(0);
  });

  it('an OpenAI-compatible backend: the panel lists its models, with nothing to pull or delete', browserTest, async () => {
    const hearth = await browser.hearth({ backend: 'openai' });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    const panel = await openPanel(page, 'Models');
    await page.locator(modelItem('fake')).waitFor();
    expect(await panel.textContent()).toContain('An OpenAI-compatible backend: these are the models it lists.');
    expect(await page.locator(`${modelItem('fake')} .model-capabilities`).textContent()).toBe('What it can do is not known');
    expect(await panel.locator('form[aria-label="Pull a model"]').count()).toBe(0);
    expect(await panel.getByRole('button', { name: /^Delete/ }).count()).toBe(0);
  });

  it('first run: Ollama without the model; one click in the empty conversation pulls it, and the first message is answered', browserTest, async () => {
    const library = new OllamaModelLibrary({ registry: [{ name: 'qwen3:8b', family: 'qwen3', capabilities: ['completion', 'tools', 'thinking'], layers: [30_000_000, 1_000] }] });
    library.plan('qwen3:8b', { steps: 4, intervalMs: 20 });
    const hearth = await ollamaHearth(browser, library);
    // Like Ollama, the stand-in answers a chat only with a model it has.
    hearth.llm.respondWith(() =>
      library.has('qwen3:8b') ? { content: 'Hello, I am here now.' } : { status: 404, errorMessage: "model 'qwen3:8b' not found, try pulling it first" },
    );
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    const offer = page.locator('.empty-state [data-pull-offer="empty-state"] button');
    await offer.waitFor();
    expect(await offer.textContent()).toBe('Pull qwen3:8b (5.2 GB)');
    expect(await page.locator('#backend-banner [data-pull-offer="banner"] button').textContent()).toBe('Pull qwen3:8b (5.2 GB)');
    const statusTexts = await page.evaluate(() => {
      const seen: string[] = [];
      (window as any).statusTexts = seen;
      const line = document.querySelector('.session-header .backend-status-text')!;
      new MutationObserver(() => seen.push(line.textContent ?? '')).observe(line, { subtree: true, childList: true, characterData: true });
    });
    void statusTexts;

    await offer.click();
    await page.locator(`${pullOf('qwen3:8b')} progress`).waitFor({ state: 'attached' });
    await page.locator(pullOf('qwen3:8b')).waitFor({ state: 'detached' });
    // Pulled: the offers go and the status line finds the model.
    await page.locator('.empty-state [data-pull-offer="empty-state"]').waitFor({ state: 'hidden' });
    await page.locator('.session-header .backend-status[data-state="reachable"]').waitFor();
    await page.locator('#backend-banner').waitFor({ state: 'hidden' });
    expect(library.has('qwen3:8b')).toBe(true);

    await sendMessage(page, 'Hello?');
    await waitForAnswer(page, 'Hello, I am here now.');
    // Hearth loaded the model ahead after the pull; the status line said so meanwhile.
    expect(library.calls).toContain('POST /api/generate qwen3:8b');
    expect(await page.evaluate(() => (window as any).statusTexts)).toContain('Ollama · qwen3:8b · loading model');
  });
});
