/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// A newcomer's second hour (issue 27), walked in one real server and one page: a schedule made
// from the form's everyday choice, an MCP server's tool switched on from the Tools panel and used,
// another model picked in the header, a write_tool approval read and denied, the header at phone,
// tablet and desktop widths, and the scheduled run's Markdown answer in the notification list.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { browserTest, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForHeaderProfile, waitForIdle } from '../support/browser.ts';
import { checkHeader, headerViewports, measureHeader } from '../support/header-layout.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { fixtureServer, writeMcpConfig } from '../support/mcp-servers.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';

const title = 'Plan the garden renovation for the spring';
const modelPicker = 'select[aria-label="Session model"]';
const bell = 'header button.notification-bell';

/** The requests that asked the scripted LLM for an answer (not its model list or health checks), from `from` on. */
function chatRequests(requests: { body?: any }[], from: number) {
  return requests.slice(from).filter((request) => Array.isArray(request.body?.messages));
}

describe.skipIf(skipBrowserTests)('the second hour', () => {
  const browser = useBrowser();

  it('a daily schedule from the form, an MCP tool switched on and used, another model, a denied write_tool, the header at three widths, a Markdown notification', browserTest, async () => {
    const llm = await startScriptedOllama({ models: ['qwen3:8b', 'llama3.2:3b'] });
    onTestFinished(() => llm.close());
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-second-hour-'));
    onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
    await writeMcpConfig(path.join(dataDir, 'mcp.json'), { fixture: fixtureServer() });
    // Tuesday 08:00 in Berlin.
    const hearth = await browser.hearth({ llm, dataDir, clock: new ManualClock('2026-11-24T07:00:00Z'), env: { OLLAMA_DEFAULT_MODEL: 'qwen3:8b' } });
    const { page, sessionId } = await browser.openSession(hearth, 'secretary');
    await waitForHeaderProfile(page, 'Personal Secretary');
    // The events socket has said hello: tools_changed and notifications reach the page from now on.
    await page.locator('.session-header .backend-status:not([data-state="unknown"])').waitFor();

    // 1. "Every day at 9" from the everyday choice, not cron: its next runs are 09:00 of the next days.
    await page.locator('header button.panel-toggle[aria-label="Schedules"]').click();
    const schedules = page.locator('aside.panel[aria-label="Schedules"]');
    const form = schedules.locator('form.schedule-form');
    await form.waitFor();
    await form.locator('[name="name"]').fill('Morning check');
    await form.locator('[name="prompt"]').fill('Check the mail');
    await form.locator('[name="kind"]').selectOption('daily');
    await form.locator('[name="time"]').fill('09:00');
    await form.locator('[name="timezone"]').fill('Europe/Berlin');
    const nextRuns = form.locator('section.schedule-next-runs[data-state="shown"] li');
    await nextRuns.nth(2).waitFor();
    expect(await nextRuns.evaluateAll((items) => items.map((item) => item.getAttribute('data-at')))).toEqual([
      '2026-11-24T09:00:00+01:00',
      '2026-11-25T09:00:00+01:00',
      '2026-11-26T09:00:00+01:00',
    ]);
    await form.locator('button[type="submit"]').click();
    const created = schedules.locator('.schedule-preview li');
    await created.nth(2).waitFor();
    for (const text of await created.allTextContents()) expect(text).toMatch(/09:00.* Europe\/Berlin$/);
    const [schedule] = (await hearth.request('GET', '/schedules')).body.schedules;
    expect(schedule).toMatchObject({ name: 'Morning check', cron: '0 9 * * *', timezone: 'Europe/Berlin', profile_id: 'secretary' });
    expect(await schedules.locator(`li[data-schedule-id="${schedule.id}"] .schedule-when`).textContent()).toBe('every day at 09:00 (0 9 * * *) · Europe/Berlin');
    await page.locator('header button.panel-toggle[aria-label="Schedules"]').click();
    await schedules.waitFor({ state: 'hidden' });

    // 2. The MCP server in mcp.json: its tools are off for a profile that does not name them, until switched on in the Tools panel.
    await page.locator('header button.panel-toggle[aria-label="Tools"]').click();
    const tools = page.locator('aside.panel[aria-label="Tools"]');
    const fixture = tools.locator('section.mcp-server[data-mcp-server="fixture"][data-status="connected"]');
    const echo = fixture.locator('li[data-tool-name="fixture__echo"]');
    await echo.waitFor();
    expect(await echo.getAttribute('data-in-profile')).toBe('false');
    expect(await echo.locator('input[role="switch"]').isChecked()).toBe(false);
    await echo.locator('input[role="switch"]').click();
    await fixture.locator('li[data-tool-name="fixture__echo"][data-enabled="true"][data-in-profile="true"]').waitFor();

    // And it is used in this same session: offered to the model, called, its result on the card.
    llm.script({ toolCalls: [{ name: 'fixture__echo', arguments: { text: 'hello from the fixture' } }] }, { content: 'The fixture echoed.' });
    const beforeEcho = llm.requests.length;
    await sendMessage(page, 'Echo something through the fixture');
    const echoCard = page.locator(`${sel.tool}[data-tool="fixture__echo"][data-status="done"]`);
    await echoCard.waitFor();
    expect(await echoCard.locator('.tool-result-text').textContent()).toBe('hello from the fixture');
    await waitForAnswer(page, 'The fixture echoed.');
    await waitForIdle(page);
    const [echoRequest] = chatRequests(llm.requests, beforeEcho);
    expect(echoRequest!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('fixture__echo');
    expect(echoRequest!.body.model).toBe('qwen3:8b');
    await page.locator('header button.panel-toggle[aria-label="Tools"]').click();
    await tools.waitFor({ state: 'hidden' });

    // 3. Another model from the header's picker: the next request carries it.
    const picker = page.locator(modelPicker);
    await picker.locator('option[value="llama3.2:3b"]').waitFor({ state: 'attached' });
    await picker.selectOption('llama3.2:3b');
    await expect.poll(async () => (await hearth.request('GET', `/sessions/${sessionId}`)).body.model).toBe('llama3.2:3b');
    llm.script({ content: 'Answered by the small one.' });
    const beforeModel = llm.requests.length;
    await sendMessage(page, 'Which model are you?');
    await waitForAnswer(page, 'Answered by the small one.');
    await waitForIdle(page);
    expect(chatRequests(llm.requests, beforeModel).map((request) => request.body.model)).toEqual(['llama3.2:3b']);

    // 4. A write_tool approval: the code highlighted as TypeScript, its permissions declared; denied, nothing is installed.
    const code = [
      "export const name = 'list_processes';",
      "export const description = 'Lists the running processes.';",
      'export const permissions = { childProcess: true };',
      "export const parameters = { type: 'object', properties: {}, required: [] };",
      'export async function execute(): Promise<string> {',
      "  return 'none';",
      '}',
      '',
    ].join('\n');
    llm.script({ toolCalls: [{ name: 'write_tool', arguments: { name: 'list_processes', code } }] }, { content: 'Not installed, then.' });
    await sendMessage(page, 'Make a tool that lists processes');
    const writeCard = page.locator(`${sel.tool}[data-tool="write_tool"]`);
    const approval = writeCard.locator(sel.approval);
    await approval.locator(sel.deny).waitFor();
    const written = writeCard.locator('[data-role="written-tool"]');
    expect(await written.locator('code.language-typescript').textContent()).toBe(code);
    expect(await written.locator('code .hljs-keyword').first().textContent()).toBe('export');
    expect(await written.locator('code .hljs-string').count()).toBeGreaterThan(0);
    expect(await written.locator('[data-role="written-tool-permissions"]').textContent()).toBe('Asks for permissions beyond the sandbox: childProcess');
    await screenshot(page, 'second-hour-write-tool');
    await approval.locator(sel.deny).click();
    await approval.locator('.approval-outcome', { hasText: 'Denied by you' }).waitFor();
    await waitForAnswer(page, 'Not installed, then.');
    await waitForIdle(page);
    expect(existsSync(path.join(hearth.config.TOOLS_DIR, 'list_processes.ts'))).toBe(false);

    // 5. The header at phone, tablet and desktop widths: the title readable, no control over another.
    await hearth.request('PATCH', `/sessions/${sessionId}`, { title });
    await page.locator(sel.sessionTitle, { hasText: title }).waitFor();
    for (const viewport of headerViewports) {
      await page.setViewportSize(viewport);
      await page.waitForFunction((width) => window.innerWidth === width, viewport.width);
      checkHeader(await measureHeader(page), viewport.width, 'in the second hour');
      await screenshot(page, `second-hour-header-${viewport.width}`);
    }

    // 6. The schedule runs; its Markdown answer is rendered in the notification list.
    llm.script({ content: 'All mail read: **done**.' });
    await page.locator('header button.panel-toggle[aria-label="Schedules"]').click();
    await schedules.locator(`li[data-schedule-id="${schedule.id}"] button.schedule-run`).click();
    await schedules.locator(`li[data-schedule-id="${schedule.id}"] .schedule-last[data-status="ok"]`).waitFor();
    await page.locator(`${bell}[data-unread="1"]`).waitFor();
    await page.locator(bell).click();
    const item = page.locator('#notification-popover .notification-list > li');
    await item.locator('.notification-body strong').waitFor();
    expect(await item.locator('.notification-title').textContent()).toBe('Morning check finished');
    expect(await item.locator('.notification-body strong').textContent()).toBe('done');
    expect(await item.locator('.notification-body').textContent()).not.toContain('**');
    await screenshot(page, 'second-hour-notification');
  });
});
