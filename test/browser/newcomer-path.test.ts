/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The path a newcomer takes, in real Chromium: `npm run dev:fake-llm` (run as that command runs it,
// a child process) and Hearth pointed at it with its default model, the shipped user tools in
// TOOLS_DIR. First load, a tool dropped in by hand and used from a chat, a profile switch, the
// message actions, and "make a tool …" writing a tool and using it in the same answer: one Hearth and
// one page walk the three in turn, each after the first in a new session.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlmProcess, type FakeLlmProcess } from '../support/fake-llm-process.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { closePanel, lastAnswerText, screenshot, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';
import { chooseInHeader } from '../support/session-header.ts';

/** Writing a tool type-checks it in a worker (about a second of CPU): generous under a busy suite. */
const runTimeoutMs = 45_000;

const status = '.session-header .backend-status';
const card = (profileId: string): string => `#transcript .profile-card[data-profile-id="${profileId}"]`;
const currentAnswers = `${sel.assistant}:not(.previous-version *)`;
const currentQuestions = `${sel.user}:not(.previous-version *)`;

/** A tool written by hand in the shape of user-tools/_template.ts. */
const shoutTool = `export const name = 'shout';

export const description = 'Repeat a text in capitals, with an exclamation mark.';

export const parameters = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'What to shout' },
  },
  required: ['text'],
  additionalProperties: false,
};

export async function execute(params: { text: string }) {
  return \`\${params.text.toUpperCase()}!\`;
}
`;

interface ShippedProfile {
  id: string;
  name: string;
  description: string;
  examples: string[];
  enabled_tools: string[];
}

let fakeLlm: FakeLlmProcess | undefined;
let fakeLlmUrl: string;
let foldersRoot: string;

beforeAll(async () => {
  if (skipBrowserTests) return;
  foldersRoot = await mkdtemp(path.join(tmpdir(), 'hearth-newcomer-'));
  fakeLlm = await startFakeLlmProcess();
  fakeLlmUrl = fakeLlm.url;
}, 60_000);

// After every test's own teardown (the harness closes each Hearth after its test).
afterAll(async () => {
  await fakeLlm?.stop();
  if (foldersRoot) await rm(foldersRoot, { recursive: true, force: true });
});

async function shippedProfiles(hearth: Hearth): Promise<ShippedProfile[]> {
  return (await hearth.request('GET', '/agents/profiles')).body.profiles;
}

async function openToolsPanel(page: Page): Promise<Locator> {
  await page.locator('header button.panel-toggle[aria-label="Tools"]').click();
  const panel = page.locator('aside.panel[aria-label="Tools"]');
  await panel.waitFor({ state: 'visible' });
  return panel;
}

/** The tool names the panel lists, in its order. */
function listedTools(panel: Locator, group: 'in-profile' | 'not-in-profile'): Promise<string[]> {
  return panel
    .locator(`[data-tool-group="${group}"] li[data-tool-name]`)
    .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.toolName ?? ''));
}

/** Waits until the last current answer's Markdown text contains `wanted`. */
async function waitForAnswerContaining(page: Page, wanted: string, timeout = runTimeoutMs): Promise<void> {
  try {
    await page.waitForFunction(
      ({ selector, wanted }) => {
        const items = document.querySelectorAll(selector);
        const last = items[items.length - 1];
        const markdown = last?.querySelector('.markdown') ?? last;
        return (markdown?.textContent ?? '').replace(/\s+/g, ' ').includes(wanted);
      },
      { selector: currentAnswers, wanted },
      { timeout },
    );
  } catch (error) {
    const seen = await lastAnswerText(page).catch(() => '<page gone>');
    throw new Error(`The last answer never contained ${JSON.stringify(wanted)}; it is ${JSON.stringify(seen.slice(0, 300))}\n${String(error)}`);
  }
}

async function storedMessages(hearth: Hearth, sessionId: string): Promise<{ role: string; content: string; superseded?: boolean }[]> {
  return (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
}

/** The session open in the page (its id is the page's fragment). */
function openSessionId(page: Page): string {
  return decodeURIComponent(new URL(page.url()).hash.slice(1));
}

describe.skipIf(skipBrowserTests)('the newcomer path, against the fake LLM', () => {
  const browser = useBrowser();

  /** Hearth as the README starts it against the fake LLM: no model set, planning on, the shipped user tools copied to TOOLS_DIR. */
  async function newcomerHearth(): Promise<{ hearth: Hearth; toolsDir: string }> {
    const toolsDir = await mkdtemp(path.join(foldersRoot, 'user-tools-'));
    await cp(path.resolve('user-tools'), toolsDir, { recursive: true });
    const hearth = await browser.hearth({ planning: true, env: { OLLAMA_HOST: fakeLlmUrl, TOOLS_DIR: toolsDir } });
    await hearth.deps.userTools.whenLoaded();
    return { hearth, toolsDir };
  }

  /** First load shows the profile cards and a reachable backend; a tool dropped into TOOLS_DIR is used from a chat; a profile switch reorders the Tools panel. */
  async function firstLoadAndHandWrittenTool(page: Page, hearth: Hearth, toolsDir: string): Promise<void> {

    // 1. Three profile cards, each with its name, description and example prompts; the backend in the header.
    const profiles = await shippedProfiles(hearth);
    expect(profiles.map((profile) => profile.id).sort()).toEqual(['secretary', 'server_admin', 'smart_home']);
    await page.locator(card('secretary')).waitFor();
    expect(await page.locator('#transcript .profile-card').count()).toBe(3);
    for (const profile of profiles) {
      const shown = page.locator(card(profile.id));
      expect(await shown.locator('h2').innerText()).toBe(profile.name);
      expect(await shown.locator('.profile-description').innerText()).toBe(profile.description);
      expect(profile.examples.length).toBeGreaterThan(0);
      expect(await shown.locator('button.example-prompt').allInnerTexts()).toEqual(profile.examples);
    }
    await page.locator(`${status}[data-state="reachable"]`).waitFor();
    expect(await page.locator(status).textContent()).toBe('Ollama · qwen3:8b · reachable');
    expect(await page.locator('#backend-banner').isHidden()).toBe(true);
    await screenshot(page, 'newcomer-first-load');

    // An example of a profile other than the one the header offers for a new session starts a session of that profile; the fake LLM plans it and answers.
    expect(await page.locator(sel.sessionProfile).inputValue()).not.toBe('smart_home');
    const smartHome = profiles.find((profile) => profile.id === 'smart_home')!;
    const example = smartHome.examples.find((text) => /^plan\b/i.test(text))!;
    expect(example).toBeDefined();
    await page.locator(card('smart_home')).getByRole('button', { name: example }).click();
    await page.locator(currentQuestions).filter({ hasText: example }).waitFor();
    await waitForHeaderProfile(page, 'Smart Home Assistant');
    await page.locator(sel.plan).waitFor({ timeout: runTimeoutMs });
    expect(await page.locator(`${sel.plan} li`).count()).toBeGreaterThanOrEqual(3);
    await waitForAnswerContaining(page, 'I followed the plan above');
    expect(await page.locator('#transcript .profile-card').count()).toBe(0);
    await waitForIdle(page, runTimeoutMs);
    const sessionId = openSessionId(page);
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('smart_home');

    // 2. A tool file dropped by hand, nothing else edited: the open Tools panel shows it, loaded and on, in the profile.
    const panel = await openToolsPanel(page);
    await panel.locator('[data-tool-group="in-profile"] li[data-tool-name="get_current_datetime"]').waitFor();
    expect(await panel.locator('li[data-tool-name="shout"]').count()).toBe(0);
    await writeFile(path.join(toolsDir, 'shout.ts'), shoutTool);
    const shout = panel.locator('[data-tool-group="in-profile"] li[data-tool-name="shout"][data-status="loaded"]');
    await shout.waitFor({ timeout: runTimeoutMs });
    expect(await shout.locator('input[role="switch"]').isChecked()).toBe(true);
    expect(await shout.locator('.tool-meta').first().textContent()).toContain('shout.ts');
    expect(await shout.textContent()).toContain('Repeat a text in capitals');

    // A message naming it makes the fake LLM call it: the card shows its result, the answer quotes it.
    const ask = 'Use the `shout` tool on good morning';
    const shouted = 'USE THE `SHOUT` TOOL ON GOOD MORNING!';
    await sendMessage(page, ask);
    const shoutCard = page.locator(`${sel.tool}[data-tool="shout"]`);
    await shoutCard.and(page.locator('[data-status="done"]')).waitFor({ timeout: runTimeoutMs });
    expect(await shoutCard.count()).toBe(1);
    expect(await shoutCard.locator('.tool-status').getAttribute('aria-label')).toBe('succeeded');
    expect(await shoutCard.locator('.tool-result-text').textContent()).toBe(shouted);
    await shoutCard.locator('.tool-result > summary').click();
    expect(await shoutCard.locator('.tool-result-text').isVisible()).toBe(true);
    await waitForAnswerContaining(page, 'I called the shout tool and it answered');
    await waitForIdle(page, runTimeoutMs);
    expect(await lastAnswerText(page)).toContain(shouted);
    await screenshot(page, 'newcomer-hand-written-tool');

    // 3. Switching the profile in the header: the Tools panel puts that profile's tools first, the transcript marks the switch.
    const withShout = await shippedProfiles(hearth);
    const smartHomeTools = await listedTools(panel, 'in-profile');
    expect(smartHomeTools).toEqual(withShout.find((profile) => profile.id === 'smart_home')!.enabled_tools);
    expect(smartHomeTools).toContain('shout');
    expect(smartHomeTools).not.toContain('ssh_exec');
    expect(await listedTools(panel, 'not-in-profile')).toContain('ssh_exec');
    const admin = withShout.find((profile) => profile.id === 'server_admin')!;
    expect(admin.enabled_tools).toContain('shout');
    expect(admin.enabled_tools).toContain('ssh_exec');
    expect(await page.locator('#transcript [data-role="profile-switch"]').count()).toBe(0);

    // With the Tools panel open the header may fold its profile and model into one control: chosen through its menu then.
    await chooseInHeader(page, sel.sessionProfile, 'server_admin');
    await waitForHeaderProfile(page, 'Server Administrator');
    const marker = page.locator('#transcript [data-role="profile-switch"]');
    await marker.waitFor();
    expect(await marker.textContent()).toContain('Server Administrator');
    await panel.locator('[data-tool-group="in-profile"] li[data-tool-name="ssh_exec"]').waitFor();
    expect(await panel.locator('[data-tool-group="in-profile"] h3').textContent()).toMatch(/^In Server Administrator/);
    const adminTools = await listedTools(panel, 'in-profile');
    expect(adminTools).toEqual(admin.enabled_tools);
    const allNames = await panel.locator('li[data-tool-name]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.toolName));
    expect(allNames.slice(0, admin.enabled_tools.length)).toEqual(admin.enabled_tools);
    expect(await listedTools(panel, 'not-in-profile')).not.toContain('ssh_exec');
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('server_admin');
    await screenshot(page, 'newcomer-profile-switch');
    await closePanel(page, 'Tools');
  }

  /** Copies, regenerates and edits-and-resends the fake LLM's answers. */
  async function messageActions(page: Page, hearth: Hearth): Promise<void> {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: hearth.baseUrl });
    const sessionId = await hearth.createSession('secretary');
    await showSession(page, sessionId);
    await waitForIdle(page);

    await sendMessage(page, 'Which day is bin day?');
    await waitForAnswerContaining(page, 'You said: Which day is bin day?');
    await waitForIdle(page, runTimeoutMs);

    // Copy: the answer as the model wrote it (Markdown), not as it is shown.
    const [, stored] = await storedMessages(hearth, sessionId);
    expect(stored).toMatchObject({ role: 'assistant' });
    expect(stored!.content).toMatch(/^\*\*Fake model here\.\*\* You said:\n\n> Which day is bin day\?/);
    await page.locator(`${currentAnswers} button[aria-label="Copy answer"]`).click();
    await page.locator(`${currentAnswers} button[aria-label="Copy answer"]`, { hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(stored!.content);

    // Regenerate: a new answer; the old one folds behind "previous version".
    await page.locator(`${currentAnswers} button[aria-label="Regenerate answer"]`).click();
    const folded = page.locator('#transcript .previous-version');
    await folded.locator('[data-role="assistant"]').waitFor({ state: 'attached', timeout: runTimeoutMs });
    await waitForIdle(page, runTimeoutMs);
    await waitForAnswerContaining(page, 'You said: Which day is bin day?');
    expect(await folded.locator(':scope > summary').textContent()).toMatch(/previous version/i);
    expect(await folded.evaluate((details: HTMLDetailsElement) => details.open)).toBe(false);
    expect(await page.locator(currentAnswers).count()).toBe(1);
    expect((await storedMessages(hearth, sessionId)).map((message) => [message.role, message.superseded ?? false])).toEqual([
      ['user', false],
      ['assistant', true],
      ['assistant', false],
    ]);

    // Edit and resend: the fake LLM answers the edited question; the first branch stays folded.
    await page.locator(`${currentQuestions} button[aria-label="Edit message"]`).click();
    const field = page.locator('textarea[aria-label="Edited message"]');
    expect(await field.inputValue()).toBe('Which day is bin day?');
    await field.fill('Which day is recycling day?');
    await page.locator('button', { hasText: 'Save and resend' }).click();
    await waitForAnswerContaining(page, 'You said: Which day is recycling day?');
    await waitForIdle(page, runTimeoutMs);
    expect(await page.locator(currentQuestions).allTextContents()).toEqual([expect.stringContaining('Which day is recycling day?')]);
    expect(await page.locator('#transcript .previous-version [data-role="user"]').first().textContent()).toContain('Which day is bin day?');
    expect(await page.locator(currentAnswers).count()).toBe(1);
    expect(await lastAnswerText(page)).not.toContain('bin day');
    const current = (await storedMessages(hearth, sessionId)).filter((message) => !message.superseded).map((message) => message.role);
    expect(current).toEqual(['user', 'assistant']);
    await screenshot(page, 'newcomer-message-actions');
  }

  /** "make a tool …" writes roll_dice with write_tool and uses it in the same answer. */
  async function makeATool(page: Page, hearth: Hearth, toolsDir: string): Promise<void> {
    const sessionId = await hearth.createSession('secretary');
    await showSession(page, sessionId);
    await waitForIdle(page);
    const panel = await openToolsPanel(page);
    await panel.locator('li[data-tool-name="write_tool"]').waitFor();
    expect(await panel.locator('li[data-tool-name="roll_dice"]').count()).toBe(0);

    await sendMessage(page, 'Make a tool that rolls dice, then roll two six-sided dice');
    const written = page.locator(`${sel.tool}[data-tool="write_tool"]`);
    const rolled = page.locator(`${sel.tool}[data-tool="roll_dice"]`);
    // The shipped profiles ask before a tool is installed, with its code on the card.
    await written.locator(sel.approval).waitFor({ timeout: runTimeoutMs });
    expect(await written.locator('[data-role="written-tool"] code.language-typescript').textContent()).toContain("export const name = 'roll_dice'");
    await written.locator(sel.allowOnce).click();
    await rolled.and(page.locator('[data-status="done"]')).waitFor({ timeout: runTimeoutMs });
    expect(await written.getAttribute('data-status')).toBe('done');
    expect(await written.locator('[data-role="written-tool"]').textContent()).toContain('roll_dice');
    expect(await written.locator('.tool-result-text').textContent()).toMatch(/^Installed/);
    const roll = (await rolled.locator('.tool-result-text').textContent()) ?? '';
    expect(roll).toMatch(/^Rolled 2d6: [1-6] \+ [1-6] = \d+$/);
    const [first, second, total] = roll.match(/\d+/g)!.slice(2).map(Number);
    expect(first! + second!).toBe(total);
    // The write_tool card comes before the roll_dice card in the transcript.
    expect(await page.locator(sel.tool).evaluateAll((cards) => cards.map((node) => (node as HTMLElement).dataset.tool))).toEqual(['write_tool', 'roll_dice']);

    await waitForAnswerContaining(page, `and called it: ${roll}.`);
    await waitForIdle(page, runTimeoutMs);
    expect(await lastAnswerText(page)).toContain('I wrote a new tool, roll_dice, installed it with write_tool');
    // The new tool is a file in TOOLS_DIR, and the open Tools panel lists it, on, in the profile.
    await panel.locator('[data-tool-group="in-profile"] li[data-tool-name="roll_dice"][data-status="loaded"]').waitFor();
    expect(await panel.locator('li[data-tool-name="roll_dice"] .tool-meta').first().textContent()).toContain('roll_dice.ts');
    const { body } = await hearth.request('GET', '/agents/tools');
    expect(body.tools.find((tool: { name: string }) => tool.name === 'roll_dice')).toMatchObject({ source: 'user', status: 'loaded' });
    expect((await storedMessages(hearth, sessionId)).at(-1)?.content).toContain(roll);
    expect(await readFile(path.join(toolsDir, 'roll_dice.ts'), 'utf8')).toContain("export const name = 'roll_dice';");
    await screenshot(page, 'newcomer-make-a-tool');
  }

  it('first load shows the profile cards and a reachable backend; a tool dropped into TOOLS_DIR is used from a chat; a profile switch reorders the Tools panel; then copy, regenerate and edit-and-resend; then "make a tool …" writes roll_dice and uses it in the same answer', { timeout: 240_000 }, async () => {
    const { hearth, toolsDir } = await newcomerHearth();
    expect(hearth.config.OLLAMA_DEFAULT_MODEL).toBe('qwen3:8b');
    const page = await browser.openPage(hearth);
    await waitForApp(page);

    await firstLoadAndHandWrittenTool(page, hearth, toolsDir);
    await messageActions(page, hearth);
    await makeATool(page, hearth, toolsDir);
  });
});
