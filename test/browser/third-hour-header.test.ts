/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The third hour, items 3 and 4 (issue 35): one profile choice, the header's, also on first load;
// New session starts with the last used profile and a message goes to it; the header's profile,
// model and backend status read in full from 360 to 1366 px (measured), or collapse into one
// labelled control whose menu reads them in full; the status names the model actually in use.
import type { Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { expectNoViolations } from '../support/axe.ts';
import { inBothSchemes, type ColorScheme } from '../support/color-scheme.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { onScreen, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';
import { chooseInHeader, closeSessionChoice, sessionChoice, truncatedInHeader } from '../support/session-header.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';

const viewports = [
  { width: 360, height: 740 },
  { width: 390, height: 844 },
  { width: 1366, height: 768 },
];
const status = '.session-header .backend-status';
const modelPicker = 'select[aria-label="Session model"]';

const hashOf = (page: Page) => page.evaluate(() => decodeURIComponent(location.hash.slice(1)));

/** The requests that asked the scripted LLM for an answer, from `from` on. */
function chatRequests(hearth: Hearth, from: number) {
  return hearth.llm.requests.slice(from).filter((request) => Array.isArray(request.body?.messages));
}

/** New session from the sidebar (from the drawer on a phone); answers the new session's id. */
async function clickNewSession(page: Page): Promise<string> {
  const before = await hashOf(page);
  if (await page.locator(sel.openSessions).isVisible()) {
    await page.locator(sel.openSessions).click();
    await page.waitForFunction(() => getComputedStyle(document.querySelector('#sidebar')!).transform === 'none');
  }
  await page.locator(sel.newSession).click();
  await page.waitForFunction((old) => location.hash.length > 1 && decodeURIComponent(location.hash.slice(1)) !== old, before);
  return hashOf(page);
}

/** Waits until the header's backend status reads `text` (it changes on the page's events, not on a timer). */
async function waitForStatus(page: Page, text: string, message: string): Promise<void> {
  try {
    await page.waitForFunction(({ selector, text }) => document.querySelector(selector)?.textContent === text, { selector: status, text });
  } catch (error) {
    const shown = await page.locator(status).textContent().catch(() => '<page gone>');
    throw new Error(`${message}: never ${JSON.stringify(text)}, it reads ${JSON.stringify(shown)}\n${String(error)}`);
  }
}

async function expectNotTruncated(page: Page, where: string): Promise<void> {
  // Soft: every width and state is measured and reported, not only the first found cut short.
  expect.soft(await truncatedInHeader(page), `boxes of the header cut short at ${where}`).toEqual([]);
}

/** Nothing of the profile, model or status is cut short at any width from 360 to 1366 px, with or without a side panel open. */
async function sweepWidths(hearth: Hearth, page: Page): Promise<void> {
  const sessionId = await hearth.createSession('smart_home');
  await page.evaluate((id) => (location.hash = id), sessionId);
  await waitForHeaderProfile(page, 'Smart Home Assistant');
  await page.locator(`${modelPicker} option[value="llama3.2:3b"]`).waitFor({ state: 'attached' });
  await chooseInHeader(page, modelPicker, 'llama3.2:3b');
  await waitForStatus(page, 'Ollama · llama3.2:3b · reachable', 'the status after picking llama3.2:3b');
  const fits = new Set<string>();
  for (const width of [360, 420, 540, 719, 720, 768, 900, 1024, 1099, 1100, 1180, 1280, 1366]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForFunction((wanted) => window.innerWidth === wanted, width);
    // The header settles its layout in the frame after a resize.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    fits.add(await page.locator('.session-subtitle').getAttribute('data-fit') ?? '');
    await expectNotTruncated(page, `${width} px`);
    if (width >= 720) {
      await page.locator('header button.panel-toggle[aria-label="Tools"]').click();
      await page.locator('aside.panel[aria-label="Tools"]').waitFor({ state: 'visible' });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      fits.add(await page.locator('.session-subtitle').getAttribute('data-fit') ?? '');
      await expectNotTruncated(page, `${width} px, Tools open`);
      await page.locator('header button.panel-toggle[aria-label="Tools"]').click();
      await page.locator('aside.panel[aria-label="Tools"]').waitFor({ state: 'hidden' });
    }
  }
  // The sweep went through the inline line and the folded control.
  expect([...fits].sort()).toEqual(expect.arrayContaining(['icon', 'inline']));
}

describe.skipIf(skipBrowserTests)('the third hour: one profile picker and a header that reads in full', () => {
  const browser = useBrowser();

  async function start(viewport: { width: number; height: number }, colorScheme: ColorScheme) {
    const llm = await startScriptedOllama({ models: ['qwen3:8b', 'llama3.2:3b'] });
    onTestFinished(() => llm.close());
    const hearth = await browser.hearth({ llm, env: { OLLAMA_DEFAULT_MODEL: 'qwen3:8b' } });
    const page = await browser.openPage(hearth, { viewport, colorScheme });
    await waitForApp(page);
    await page.locator('#transcript .profile-card').first().waitFor();
    await page.locator(`${status}:not([data-state="unknown"])`).waitFor();
    return { hearth, page };
  }

  // One page a width: the behaviour (the picker, New session, the status following the model) does not
  // depend on the colour scheme, so it runs once; what does (cut-short boxes, axe's contrast, the
  // screenshots, the picker on screen) is checked in both schemes in that page. The widths alternate
  // the scheme the page loads in.
  for (const [index, viewport] of viewports.entries()) {
    const loadedIn: ColorScheme = index % 2 === 0 ? 'light' : 'dark';
    const at = (scheme: ColorScheme) => `${viewport.width} px, ${scheme}`;

    it(`at ${viewport.width} px (loaded ${loadedIn}, checked in both schemes): the header's is the one profile picker, also on first load; profile, model and backend status read in full, and the status names the model picked; New session starts with the last used profile and a message goes to it${viewport.width === 1366 ? '; then nothing of the profile, model or status is cut short at any width from 360 to 1366 px, with or without a side panel open' : ''}`, { timeout: 120_000 }, async () => {
      const { hearth, page } = await start(viewport, loadedIn);

      // One picker: none in the sidebar; the header has its own on first load, with the default profile.
      expect.soft(await page.locator('#sidebar select').count(), 'selects in the sidebar').toBe(0);
      expect.soft(await page.locator(`select[aria-label="Profile for new sessions"]`).count(), 'the sidebar picker').toBe(0);
      expect(await page.locator('select[aria-label="Session profile"]').count()).toBe(1);
      await waitForHeaderProfile(page, 'Personal Secretary');
      await inBothSchemes(page, loadedIn, async (scheme) => {
        const choice = await sessionChoice(page);
        expect(await onScreen(page.locator(sel.sessionProfile)), `the header's profile picker on first load (${choice}, ${scheme})`).toBe(true);
        await closeSessionChoice(page);
      });

      // Profile, model and backend status read in full, and the status names the model picked.
      expect(await page.locator(status).textContent()).toBe('Ollama · qwen3:8b · reachable');
      const sessionId = await hearth.createSession('server_admin');
      await page.evaluate((id) => (location.hash = id), sessionId);
      await waitForHeaderProfile(page, 'Server Administrator');
      await page.locator(`${modelPicker} option[value="llama3.2:3b"]`).waitFor({ state: 'attached' });
      await inBothSchemes(page, loadedIn, (scheme) => expectNotTruncated(page, `${at(scheme)}, a session`));

      await chooseInHeader(page, modelPicker, 'llama3.2:3b');
      await expect.poll(async () => (await hearth.request('GET', `/sessions/${sessionId}`)).body.model).toBe('llama3.2:3b');
      await waitForStatus(page, 'Ollama · llama3.2:3b · reachable', 'the status after picking llama3.2:3b');
      await inBothSchemes(page, loadedIn, async (scheme) => {
        await expectNotTruncated(page, `${at(scheme)}, llama3.2:3b picked`);
        await screenshot(page, `third-hour-header-${viewport.width}-${scheme}-model-picked`);
        // Collapsed, the control and its open menu are named, reachable and readable (axe-core, WCAG 2.1 AA).
        if ((await sessionChoice(page)) === 'menu') {
          await screenshot(page, `third-hour-header-${viewport.width}-${scheme}-menu-open`);
          await expectNoViolations(page, `${at(scheme)}, the profile and model menu open`);
          await closeSessionChoice(page);
        }
      });

      // The status follows the session it names: another session follows its profile's model again.
      const other = await hearth.createSession('secretary');
      await page.evaluate((id) => (location.hash = id), other);
      await waitForHeaderProfile(page, 'Personal Secretary');
      await waitForStatus(page, 'Ollama · qwen3:8b · reachable', 'the status in a session on the profile’s model');
      await page.evaluate((id) => (location.hash = id), sessionId);
      await waitForStatus(page, 'Ollama · llama3.2:3b · reachable', 'the status back in the session with llama3.2:3b');

      // First load: the header's profile picker reads in full too.
      await page.evaluate(() => (location.hash = ''));
      await page.locator('#transcript .profile-card').first().waitFor();
      await waitForHeaderProfile(page, 'Personal Secretary');
      expect(await page.locator(status).textContent()).toBe('Ollama · qwen3:8b · reachable');
      await inBothSchemes(page, loadedIn, async (scheme) => {
        await expectNotTruncated(page, `${at(scheme)}, first load`);
        await screenshot(page, `third-hour-header-${viewport.width}-${scheme}-first-load`);
      });

      // The reported path: New session, then Server Administrator chosen (in the header now), then `uptime`.
      // (Opening sessions and picking a model above chose no profile: New session still starts as the default.)
      const first = await clickNewSession(page);
      expect((await hearth.request('GET', `/sessions/${first}`)).body.profile_id).toBe('secretary');
      await waitForHeaderProfile(page, 'Personal Secretary');
      await chooseInHeader(page, sel.sessionProfile, 'server_admin');
      await waitForHeaderProfile(page, 'Server Administrator');
      await expect.poll(async () => (await hearth.request('GET', `/sessions/${first}`)).body.profile_id).toBe('server_admin');
      hearth.llm.script({ content: 'Up 3 days.' });
      const beforeUptime = hearth.llm.requests.length;
      await sendMessage(page, 'run `uptime`');
      await waitForAnswer(page, 'Up 3 days.');
      await waitForIdle(page);
      const [uptime] = chatRequests(hearth, beforeUptime);
      expect(uptime!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('ssh_exec');
      expect(uptime!.body.messages.at(-1).content).toBe('run `uptime`');

      // New session starts with the profile used last, also after a reload (it is remembered in the browser).
      const second = await clickNewSession(page);
      expect((await hearth.request('GET', `/sessions/${second}`)).body.profile_id, 'New session after using Server Administrator').toBe('server_admin');
      await waitForHeaderProfile(page, 'Server Administrator');
      await page.evaluate(() => (location.hash = ''));
      await page.reload();
      await waitForApp(page);
      await page.locator('#transcript .profile-card').first().waitFor();
      await waitForHeaderProfile(page, 'Server Administrator');
      const third = await clickNewSession(page);
      expect((await hearth.request('GET', `/sessions/${third}`)).body.profile_id, 'New session after a reload').toBe('server_admin');

      // On first load the header's choice is the profile of the session the first message starts.
      await page.evaluate(() => (location.hash = ''));
      await page.locator('#transcript .profile-card').first().waitFor();
      await chooseInHeader(page, sel.sessionProfile, 'smart_home');
      await waitForHeaderProfile(page, 'Smart Home Assistant');
      hearth.llm.script({ content: 'The lights are on.' });
      await sendMessage(page, 'Are the lights on?');
      await waitForAnswer(page, 'The lights are on.');
      const started = await hashOf(page);
      expect((await hearth.request('GET', `/sessions/${started}`)).body.profile_id).toBe('smart_home');
      await waitForIdle(page);
      const fourth = await clickNewSession(page);
      expect((await hearth.request('GET', `/sessions/${fourth}`)).body.profile_id, 'New session after a first message as Smart Home Assistant').toBe('smart_home');

      // The widest page (light) goes on through every width, in the same page and server.
      if (viewport.width === 1366) await sweepWidths(hearth, page);
    });
  }
});
