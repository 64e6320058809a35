/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The Memory and Tools panels, sub-agents and attachments walk one page of one server (the upload limit
// set low for the over-the-limit step; the other steps' files are far under it); compression needs a
// server with a small context of its own.
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../support/scripted-llm.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { browserTest, closePanel, openPanel, screenshot, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';

const isSummariser = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content ?? '').startsWith('You condense the earlier part');
const lastUserContent = (request: RecordedRequest): string =>
  [...request.body.messages].reverse().find((message: any) => message.role === 'user')?.content ?? '';

/** Drops or pastes files on the page the way a browser does: a DataTransfer carrying File objects. */
async function dispatchFiles(page: Page, how: 'drop' | 'paste', files: { name: string; type: string; text: string }[]) {
  await page.evaluate(
    ({ how, files }) => {
      const transfer = new DataTransfer();
      for (const file of files) transfer.items.add(new File([file.text], file.name, { type: file.type }));
      if (how === 'paste') {
        document.querySelector('textarea[aria-label="Message"]')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
      } else {
        const zone = document.querySelector('main')!;
        zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
        zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      }
    },
    { how, files },
  );
}

/** Long-term memory in the Memory panel: facts listed by category, one edited and one deleted (the panel is closed after). */
async function memoryPanel(page: Page, hearth: Hearth, coffee: { id: number }, cat: { id: number }): Promise<void> {
  const panel = await openPanel(page, 'Memory');
  await panel.locator(`li[data-fact-id="${coffee.id}"]`).waitFor();
  expect(await panel.locator(`li[data-fact-id="${cat.id}"]`).textContent()).toContain('Miso, a grey tabby');
  expect(await panel.locator('h3').allTextContents()).toEqual(expect.arrayContaining(['preferences', 'household']));

  await panel.locator('button[aria-label="Edit coffee"]').click();
  const input = panel.locator('input[aria-label="Fact value"]');
  await input.fill('oat flat white');
  await input.press('Enter');
  await panel.locator(`li[data-fact-id="${coffee.id}"]`).filter({ hasText: 'oat flat white' }).waitFor();
  await page.waitForFunction(() => !document.querySelector('input[aria-label="Fact value"]'));

  await panel.locator('button[aria-label="Delete cat"]').click();
  await panel.locator(`li[data-fact-id="${cat.id}"]`).waitFor({ state: 'detached' });
  const stored = (await hearth.request('GET', '/memory')).body.facts;
  expect(stored.map((fact: any) => [fact.key, fact.value])).toEqual([['coffee', 'oat flat white']]);
  await screenshot(page, 'memory-panel');
  await closePanel(page, 'Memory');
}

/** A sub-agent's reasoning and tool calls nest inside its spawn_agent card. */
async function subAgentNested(page: Page, hearth: Hearth): Promise<void> {
  await showSession(page, await hearth.createSession());
  hearth.llm.script(
    { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Count to three and note it' } }] },
    { thinking: 'Noting first.', toolCalls: [{ name: 'scratchpad', arguments: { action: 'write', section: 'count', content: '1 2 3' } }], delayMs: 40 },
    { content: 'one two three' },
    { content: 'The sub-agent counted: one two three.' },
  );
  await sendMessage(page, 'Delegate counting');
  await waitForAnswer(page, 'The sub-agent counted: one two three.');
  await waitForIdle(page);

  const spawn = page.locator(`${sel.tool}[data-tool="spawn_agent"]`);
  expect(await spawn.getAttribute('data-status')).toBe('done');
  const nested = spawn.locator('.subagent-activity [data-role="tool"][data-tool="scratchpad"]');
  expect(await nested.count()).toBe(1);
  expect(await nested.getAttribute('data-status')).toBe('done');
  expect(await nested.getAttribute('data-subagent')).toBe('true');
  expect(await spawn.locator('.subagent-activity details.thinking').textContent()).toContain('Noting first.');
  // The sub-agent's card is not also a top-level card of the conversation.
  expect(await page.locator(`${sel.transcript} > [data-role="tool"]`).count()).toBe(1);
  expect(await spawn.locator(':scope > .tool-result-slot details.tool-result').textContent()).toContain('one two three');
  await screenshot(page, 'subagent-nested');
}

/** Files dropped on the conversation or pasted into the message box are attached and uploaded. */
async function droppedAndPasted(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession();
  await showSession(page, sessionId);
  hearth.llm.script({ content: 'Got both files.' });
  await dispatchFiles(page, 'drop', [{ name: 'dropped.md', type: 'text/markdown', text: '# Dropped\n' }]);
  await dispatchFiles(page, 'paste', [{ name: 'pasted.csv', type: 'text/csv', text: 'a,b\n1,2\n' }]);
  await page.waitForFunction(() => document.querySelectorAll('li[data-attachment]').length === 2);
  expect(await page.locator('li[data-attachment]').evaluateAll((chips) => chips.map((chip) => (chip as HTMLElement).dataset.attachment))).toEqual(['dropped.md', 'pasted.csv']);

  await sendMessage(page, 'Here you go');
  await waitForAnswer(page, 'Got both files.');
  const folder = path.join(hearth.config.SESSION_FILES_DIR, sessionId);
  expect((await readdir(folder)).sort()).toEqual(['dropped.md', 'pasted.csv']);
  expect(await page.locator(`${sel.user} .user-files li`).allTextContents()).toEqual(['dropped.md', 'pasted.csv']);
  await waitForIdle(page);
}

/** Over the 1 MB upload limit: the message and its attachments are kept, the reason said, and nothing uploaded twice on the retry. */
async function overUploadLimit(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession();
  await showSession(page, sessionId);
  hearth.llm.script({ content: 'Read the notes.' });
  const requestsBefore = hearth.llm.requests.length;
  await page.locator(sel.files).setInputFiles([
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('small enough\n') },
    { name: 'huge.log', mimeType: 'text/plain', buffer: Buffer.alloc(2 * 1024 * 1024, 'x') },
  ]);
  await page.locator('li[data-attachment="huge.log"]').waitFor();
  await sendMessage(page, 'Read the whole log');

  const problem = page.locator('#composer .composer-error');
  await problem.waitFor({ state: 'visible' });
  expect(await problem.textContent()).toContain('upload limit of 1 MB');
  expect(await page.locator(sel.message).inputValue()).toBe('Read the whole log');
  expect(await page.locator('li[data-attachment]').count()).toBe(2);
  expect(await page.locator(sel.user).count()).toBe(0);
  expect(hearth.llm.requests).toHaveLength(requestsBefore);
  const folder = path.join(hearth.config.SESSION_FILES_DIR, sessionId);
  // The file under the limit landed; nothing of the refused one is left, not even a partial file.
  expect(await readdir(folder)).toEqual(['notes.txt']);
  await screenshot(page, 'upload-too-large');

  await page.locator('button[aria-label="Remove huge.log"]').click();
  await page.locator(sel.message).press('Enter');
  await waitForAnswer(page, 'Read the notes.');
  expect(await problem.isVisible()).toBe(false);
  expect(await readdir(folder)).toEqual(['notes.txt']);
  const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
  expect(body.messages[0].content).toContain('- notes.txt: ');
  await waitForIdle(page);
}

/** The Tools panel lists built-in and user tools and follows tools_changed, load errors included. Last: the tools it writes stay. */
async function toolsPanelFollows(page: Page, hearth: Hearth): Promise<void> {
  await showSession(page, await hearth.createSession());
  await page.locator(sel.send).waitFor();
  const panel = await openPanel(page, 'Tools');
  await panel.locator('li[data-tool-name="todo"][data-source="builtin"]').waitFor();
  expect(await panel.locator('li[data-source="user"]').count()).toBe(0);

  await writeFile(
    path.join(hearth.config.TOOLS_DIR, 'dice_roll.ts'),
    `export const name = 'dice_roll';
export const description = 'Rolls a six-sided die.';
export const parameters = { type: 'object', properties: {}, required: [] };
export async function execute() { return String(1 + Math.floor(Math.random() * 6)); }
`,
  );
  // Nothing is clicked: the socket's tools_changed refreshes the open panel.
  const written = panel.locator('li[data-tool-name="dice_roll"][data-source="user"]');
  await written.waitFor();
  expect(await written.textContent()).toContain('Rolls a six-sided die.');

  await writeFile(path.join(hearth.config.TOOLS_DIR, 'broken_tool.ts'), 'export const name = "broken_tool";\nexport const description = ;\n');
  // A tool file that fails to load is listed as a user tool with its error (test/browser/tools-panel.test.ts).
  const failure = panel.locator('li[data-tool-name="broken_tool"][data-status="failed"] .tool-error');
  await failure.waitFor();
  expect((await failure.textContent())!.length).toBeGreaterThan(0);
  expect(await written.count()).toBe(1);
  await screenshot(page, 'tools-panel');
}

describe.skipIf(skipBrowserTests)('panels, sub-agents, compression and attachments in the browser', () => {
  const browser = useBrowser();

  it('in one page: the Memory panel edits and deletes facts; a sub-agent nests in its card; dropped and pasted files attach; an upload over the limit keeps the message and uploads nothing twice; the Tools panel follows tools_changed', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth({ env: { SESSION_FILES_MAX_SIZE_MB: '1' } });
    // Chromium logs every 4xx response; the over-the-limit step's 413 is its point.
    browser.allowErrors(/status of 413 \(Payload Too Large\)/);
    for (const fact of [
      { category: 'preferences', key: 'coffee', value: 'flat white' },
      { category: 'household', key: 'cat', value: 'Miso, a grey tabby' },
    ]) {
      expect((await hearth.request('PUT', '/memory/facts', fact)).status).toBe(200);
    }
    const facts = (await hearth.request('GET', '/memory')).body.facts as { id: number; key: string }[];
    const coffee = facts.find((fact) => fact.key === 'coffee')!;
    const cat = facts.find((fact) => fact.key === 'cat')!;
    const page = await browser.openPage(hearth);
    await waitForApp(page);

    await memoryPanel(page, hearth, coffee, cat);
    await subAgentNested(page, hearth);
    await droppedAndPasted(page, hearth);
    await overUploadLimit(page, hearth);
    await toolsPanelFollows(page, hearth);
  });

  it('fills the context meter from stream_end, announces compression and shows the summary in the Context panel', browserTest, async () => {
    const hearth = await browser.hearth({ env: { OLLAMA_NUM_CTX: '4096', CONTEXT_KEEP_RECENT: '1' } });
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { content: '## Current goal\n- Plan the Lisbon trip\n## Key facts\n- Hotel: Casa Azul' };
      const turn = Number(/Question (\d+)/.exec(lastUserContent(request))?.[1]);
      return { content: `Answer ${turn}.`, usage: turn === 3 ? { promptTokens: 3_900, completionTokens: 20 } : { promptTokens: 1_000, completionTokens: 24 } };
    });
    const { page, sessionId } = await browser.openSession(hearth);
    const meter = page.locator('#context-meter');

    await sendMessage(page, 'Question 1');
    await waitForAnswer(page, 'Answer 1.');
    await page.waitForFunction(() => (document.querySelector('#context-meter') as HTMLMeterElement).value === 1_024);
    expect(await meter.evaluate((node: HTMLMeterElement) => node.max)).toBe(4_096);
    expect(await page.locator('#context-share').textContent()).toBe('25%');
    await waitForIdle(page);

    await sendMessage(page, 'Question 2');
    await waitForAnswer(page, 'Answer 2.');
    await waitForIdle(page);
    // Every share the header shows from here on, as it is drawn (compression follows the turn at once).
    await page.evaluate(() => {
      const share = document.querySelector('#context-share')!;
      const shown: string[] = ((window as any).sharesShown = []);
      new MutationObserver(() => shown.push(share.textContent ?? '')).observe(share, { childList: true, characterData: true, subtree: true });
    });
    await sendMessage(page, 'Question 3');
    await waitForAnswer(page, 'Answer 3.');

    // Compression after the turn is announced in the transcript, and the display history keeps every message.
    const notice = page.locator(`${sel.transcript} [data-role="notice"]`);
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/summarised/);
    expect(await page.locator(sel.user).count()).toBe(3);

    // The meter then shows the compressed context, as the Context panel does.
    const compressed = (await hearth.request('GET', `/sessions/${sessionId}/context`)).body;
    expect(compressed.context_tokens).toBeLessThan(3_920);
    await page.waitForFunction((tokens) => (document.querySelector('#context-meter') as HTMLMeterElement).value === tokens, compressed.context_tokens);
    const compressedShare = `${Math.round((100 * compressed.context_tokens) / 4_096)}%`;
    expect(await page.evaluate(() => (window as any).sharesShown)).toEqual(['96%', compressedShare]);

    const panel = await openPanel(page, 'Context');
    // The panel opens at once and fills when GET /sessions/:id/context answers.
    const tokensLine = `${compressed.context_tokens.toLocaleString('en-US')} of 4,096 tokens`;
    await panel.getByText(tokensLine).first().waitFor();
    expect(await panel.textContent()).toContain(tokensLine);
    const summary = panel.locator('[data-role="summary"]');
    await summary.waitFor();
    await summary.locator('summary').click();
    expect(await summary.textContent()).toContain('Hotel: Casa Azul');
    await screenshot(page, 'context-panel-summary');
  });
});
