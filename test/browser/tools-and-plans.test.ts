/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Tool cards, reasoning and plans, each in a session of its own, walked in one page of one server.
// What a stored history draws is checked by opening the session again (a new view reads the session
// from the server, as a page load does); the last step reloads the page for real.
import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/tools/tool.ts';
import type { Page } from 'playwright-core';
import type { Hearth } from '../support/hearth-server.ts';
import { screenshot, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';

const longReport = `${'disk /dev/sda1 healthy\n'.repeat(200)}END OF REPORT`;

/** A tool that runs until the test releases it, one that always reports failure, and one with a long result. */
function gatedTools() {
  let release!: (output: string) => void;
  const gate = new Promise<string>((resolve) => (release = resolve));
  const tools: Tool[] = [
    {
      name: 'wait_for_gate',
      description: 'Waits until the test opens the gate.',
      parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'], additionalProperties: false },
      timeoutMs: 60_000,
      execute: () => gate,
    },
    {
      name: 'refuse',
      description: 'Always refuses.',
      parameters: { type: 'object', properties: {} },
      execute: async () => ({ output: 'refused on purpose', success: false }),
    },
    {
      name: 'long_report',
      description: 'Prints a long report.',
      parameters: { type: 'object', properties: {} },
      execute: async () => longReport,
    },
  ];
  return { tools, release };
}

/** A profile with the planning phase on (the shipped profiles' planning is off in tests unless asked for). */
const plannerProfile = `---
id: planner
name: Planner
description: Plans before it acts, in tests.
max_iterations: 4
planning_enabled: true
tools: [scratchpad]
---
You plan, then act.
`;

const gateProfile = `---
id: gatekeeper
name: Gatekeeper
description: Opens gates in tests.
temperature: 0.1
max_iterations: 4
tools: [wait_for_gate, refuse, long_report, switch_profile]
---
You open gates.
`;

/** Opens the session again: leaves it for the new-session view, then comes back, so its history is read from the server and drawn anew. */
async function reopenSession(page: Page, sessionId: string): Promise<void> {
  await page.evaluate(() => (location.hash = ''));
  await page.locator('#transcript .profile-card').first().waitFor();
  await showSession(page, sessionId);
  await waitForApp(page);
}

/** A tool card pending while the tool runs and done after it returns; the stored history draws the same card. */
async function pendingThenDone(page: Page, hearth: Hearth, release: (output: string) => void): Promise<void> {
  const sessionId = await hearth.createSession('gatekeeper');
  await showSession(page, sessionId);
  hearth.llm.script({ toolCalls: [{ name: 'wait_for_gate', arguments: { item: 'garden-gate' } }] }, { content: 'The gate is open.' });
  await sendMessage(page, 'Open the gate');

  const card = page.locator(`${sel.tool}[data-tool="wait_for_gate"]`);
  await page.locator(`${sel.tool}[data-tool="wait_for_gate"][data-status="pending"]`).waitFor();
  expect(await card.count()).toBe(1);
  expect(await card.getAttribute('data-call-id')).toBeTruthy();
  expect(await card.locator('details.tool-args').textContent()).toContain('garden-gate');
  expect(await page.locator(sel.stop).isVisible()).toBe(true);
  // The end of the transcript says the run is still working while nothing streams.
  const working = page.locator(`${sel.transcript}[data-working="true"]`);
  expect(await working.count()).toBe(1);
  expect(await page.evaluate((selector) => getComputedStyle(document.querySelector(selector)!, '::after').content, sel.transcript)).toBe('"Working"');
  await screenshot(page, 'tool-card-pending');

  release('gate opened at 07:00');
  await page.locator(`${sel.tool}[data-tool="wait_for_gate"][data-status="done"]`).waitFor();
  expect(await card.locator('details.tool-result').textContent()).toContain('gate opened at 07:00');
  await waitForAnswer(page, 'The gate is open.');
  await waitForIdle(page);
  expect(await page.locator(sel.tool).count()).toBe(1);
  expect(await working.count()).toBe(0);

  // The stored history renders the same card.
  await reopenSession(page, sessionId);
  await page.locator(`${sel.tool}[data-tool="wait_for_gate"][data-status="done"]`).waitFor();
  expect(await page.locator(sel.tool).count()).toBe(1);
  await waitForAnswer(page, 'The gate is open.');
}

/** Two rounds of Ollama tool calls keep two cards, each with its own result, also as stored. */
async function twoRoundsTwoCards(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession('gatekeeper');
  await showSession(page, sessionId);
  // The scripted Ollama, like older Ollama versions, sends no call ids: the server makes them unique across rounds.
  hearth.llm.script({ toolCalls: [{ name: 'long_report', arguments: {} }] }, { toolCalls: [{ name: 'refuse', arguments: {} }] }, { content: 'Two rounds done.' });
  await sendMessage(page, 'Report, then refuse');
  await waitForAnswer(page, 'Two rounds done.');
  const check = async () => {
    const cards = page.locator(sel.tool);
    expect(await cards.count()).toBe(2);
    const ids = await cards.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-call-id')));
    expect(new Set(ids).size).toBe(2);
    expect(await page.locator(`${sel.tool}[data-tool="long_report"]`).getAttribute('data-status')).toBe('done');
    expect(await page.locator(`${sel.tool}[data-tool="long_report"] details.tool-result`).textContent()).toContain('END OF REPORT');
    expect(await page.locator(`${sel.tool}[data-tool="refuse"]`).getAttribute('data-status')).toBe('failed');
    expect(await page.locator(`${sel.tool}[data-tool="refuse"] details.tool-result`).textContent()).toContain('refused on purpose');
  };
  await check();
  await waitForIdle(page);
  await reopenSession(page, sessionId);
  await waitForAnswer(page, 'Two rounds done.');
  await check();
}

/** A call that reports failure and a call to an unknown tool are both marked failed. */
async function failedCalls(page: Page, hearth: Hearth): Promise<void> {
  await showSession(page, await hearth.createSession('gatekeeper'));
  hearth.llm.script(
    { toolCalls: [{ name: 'refuse', arguments: {} }, { name: 'no_such_tool', arguments: { x: 1 } }] },
    { content: 'Both calls failed.' },
  );
  await sendMessage(page, 'Try both');
  await page.locator(`${sel.tool}[data-tool="refuse"][data-status="failed"]`).waitFor();
  await page.locator(`${sel.tool}[data-tool="no_such_tool"][data-status="failed"]`).waitFor();
  expect(await page.locator(`${sel.tool}[data-tool="refuse"] details.tool-result`).textContent()).toContain('refused on purpose');
  await waitForAnswer(page, 'Both calls failed.');
  expect(await page.locator(`${sel.tool}[data-status="done"]`).count()).toBe(0);
  expect(await page.locator(`${sel.tool}[data-status="pending"]`).count()).toBe(0);
  // A short failure is shown unfolded, so the reason is in view.
  expect(await page.locator(`${sel.tool}[data-tool="refuse"] details.tool-result`).getAttribute('open')).not.toBeNull();
  await screenshot(page, 'tool-cards-failed');
  await waitForIdle(page);
}

/** A long result folds behind a summary that gives its length, and unfolds on a click. */
async function longResultFolded(page: Page, hearth: Hearth): Promise<void> {
  await showSession(page, await hearth.createSession('gatekeeper'));
  hearth.llm.script({ toolCalls: [{ name: 'long_report', arguments: {} }] }, { content: 'All disks are healthy.' });
  await sendMessage(page, 'Report on the disks');
  await waitForAnswer(page, 'All disks are healthy.');
  const result = page.locator(`${sel.tool}[data-tool="long_report"][data-status="done"] details.tool-result`);
  expect(await result.locator('summary').textContent()).toBe(`Result (${longReport.length.toLocaleString('en-US')} characters)`);
  expect(await result.getAttribute('open')).toBeNull();
  expect(await result.locator('pre').isVisible()).toBe(false);
  await result.locator('summary').click();
  await result.locator('pre').filter({ hasText: 'END OF REPORT' }).waitFor({ state: 'visible' });
  await waitForIdle(page);
}

/** Reasoning streams into an open details.thinking that folds when the reasoning ends, and stays folded as stored. */
async function thinkingFolds(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession();
  await showSession(page, sessionId);
  const thinking = 'First I check the weather, then I decide about the umbrella.';
  hearth.llm.script({ thinking, chunkSize: 6, content: 'Take the umbrella.', delayMs: 90 });
  await sendMessage(page, 'Umbrella?');

  const details = page.locator(`${sel.assistant} details.thinking`);
  await page.waitForFunction(
    (selector) => {
      const block = document.querySelector(selector) as HTMLDetailsElement | null;
      return block !== null && block.open && (block.textContent ?? '').includes('weather') && !(block.textContent ?? '').includes('umbrella.');
    },
    `${sel.assistant} details.thinking`,
    { polling: 'raf' },
  );
  await screenshot(page, 'thinking-streaming');
  await page.waitForFunction((selector) => (document.querySelector(selector) as HTMLDetailsElement | null)?.open === false, `${sel.assistant} details.thinking`, { polling: 'raf' });
  await waitForAnswer(page, 'Take the umbrella.');
  expect(await details.count()).toBe(1);
  expect(await details.evaluate((block) => (block as HTMLDetailsElement).open)).toBe(false);
  expect((await details.textContent())?.replace(/\s+/g, ' ')).toContain(thinking);
  expect(await page.locator(`${sel.assistant} .markdown`).last().textContent()).not.toContain('weather');

  await waitForIdle(page);
  await reopenSession(page, sessionId);
  await waitForAnswer(page, 'Take the umbrella.');
  expect(await page.locator(`${sel.assistant} details.thinking`).evaluate((block) => (block as HTMLDetailsElement).open)).toBe(false);
  expect(await page.locator(`${sel.assistant} details.thinking`).textContent()).toContain('umbrella.');
}

/** The plan of the planning phase shows as one plan card, not again as an answer, also as stored. */
async function planCard(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession('planner');
  await showSession(page, sessionId);
  const plan = '1. Check the kettle (scratchpad)\n2. Pour the tea';
  hearth.llm.script({ content: plan }, { content: 'Tea poured as planned.', delayMs: 20 });
  await sendMessage(page, 'Make tea, step by step');
  const card = page.locator(sel.plan);
  await card.waitFor();
  expect(await card.textContent()).toContain('Check the kettle');
  expect(await card.textContent()).toContain('Pour the tea');
  await waitForAnswer(page, 'Tea poured as planned.');
  await screenshot(page, 'plan-card');
  expect(await page.locator(sel.plan).count()).toBe(1);
  // The plan is not shown a second time as an ordinary answer.
  expect(await page.locator(sel.assistant).filter({ hasText: 'Check the kettle' }).count()).toBe(0);

  await waitForIdle(page);
  await reopenSession(page, sessionId);
  await page.locator(sel.plan).waitFor();
  expect(await page.locator(sel.plan).count()).toBe(1);
  await waitForAnswer(page, 'Tea poured as planned.');
}

/** The header's profile follows an allowed switch_profile call, also after the page is loaded again. */
async function switchProfileInHeader(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession('secretary');
  await showSession(page, sessionId);
  hearth.llm.script({ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'server_admin' } }] }, { content: 'Switched to the admin.' });
  await waitForHeaderProfile(page, 'Personal Secretary');
  await sendMessage(page, 'Please look at my server');
  const approval = page.locator(`${sel.tool}[data-tool="switch_profile"]`).locator(sel.approval);
  await approval.waitFor();
  expect(await approval.locator('.approval-subject').textContent()).toBe('secretary -> server_admin');
  await approval.locator(sel.allowOnce).click();
  await waitForHeaderProfile(page, 'Server Administrator');
  await waitForAnswer(page, 'Switched to the admin.');
  await page.locator(`${sel.tool}[data-tool="switch_profile"][data-status="done"]`).waitFor();
  expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('server_admin');

  await page.reload();
  await waitForApp(page);
  await waitForHeaderProfile(page, 'Server Administrator');
}

describe.skipIf(skipBrowserTests)('tool cards, reasoning and plans in the browser', () => {
  const browser = useBrowser();

  it('in one page, each in its own session: a tool card pending then done; two rounds in two cards; failed and unknown calls marked failed; a long result folded; reasoning streamed then folded; the plan card; the header following switch_profile', { timeout: 120_000 }, async () => {
    const { tools, release } = gatedTools();
    const hearth = await browser.hearth({ tools, profiles: { gatekeeper: gateProfile, planner: plannerProfile } });
    const page = await browser.openPage(hearth);
    await waitForApp(page);

    await pendingThenDone(page, hearth, release);
    await twoRoundsTwoCards(page, hearth);
    await failedCalls(page, hearth);
    await longResultFolded(page, hearth);
    await thinkingFolds(page, hearth);
    await planCard(page, hearth);
    await switchProfileInHeader(page, hearth);
  });
});
