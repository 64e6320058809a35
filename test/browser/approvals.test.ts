/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appendMessage } from '../../src/store/messages-repository.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { browserTest, closePanel, screenshot, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForIdle } from '../support/browser.ts';
import { expectNoViolations } from '../support/axe.ts';
import { setColorScheme } from '../support/color-scheme.ts';

// The shipped server_admin profile runs read-only terminal commands at once and asks before the others.
const admin = 'server_admin';
const terminal = (command: string) => ({ name: 'terminal', arguments: { command } });

/** Where the terminal tool ran the session's commands. */
const inWorkFolder = (hearth: Hearth, sessionId: string, name: string) => path.join(hearth.config.SESSION_FILES_DIR, sessionId, name);

/** The approval inside the `index`-th terminal card of the transcript. */
function approvalOf(page: Page, index = 0): Locator {
  return page.locator(`${sel.tool}[data-tool="terminal"]`).nth(index).locator(sel.approval);
}

async function outcomeOf(approval: Locator): Promise<string> {
  await approval.locator('.approval-outcome:not(:empty)').waitFor();
  return ((await approval.locator('.approval-outcome').textContent()) ?? '').trim();
}

/** The element that has the focus, as `data-role` or aria-label. */
function focused(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const active = document.activeElement as HTMLElement | null;
    return active?.dataset.role ?? active?.getAttribute('aria-label') ?? null;
  });
}

async function pendingCallId(hearth: Hearth, sessionId: string): Promise<string> {
  const { body } = await hearth.request('GET', `/approvals?status=pending&session_id=${sessionId}`);
  expect(body.approvals).toHaveLength(1);
  return body.approvals[0].call_id;
}

// Each flow below runs in a server_admin session of its own; several share one server and one page
// (opened on the next session through the address, as a session link does), where what they check
// does not need a fresh page: a page load costs far more than the flow.

async function allowOnce(hearth: Hearth, page: Page, sessionId: string): Promise<void> {
  hearth.llm.script({ toolCalls: [terminal('touch made.txt')] }, { content: 'Made it.' });
  await sendMessage(page, 'Make a file');

  const approval = approvalOf(page);
  await approval.waitFor();
  expect(await approval.locator('.approval-subject').textContent()).toBe('touch made.txt');
  expect(await approval.locator('.approval-reason').textContent()).toContain('terminal');
  // server_admin allows terminal(readonly); the card says why this command missed it.
  const notReadOnly = approval.locator('[data-role="not-read-only"]');
  expect(await notReadOnly.textContent()).toBe('Not read-only: touch writes files.');
  expect(await notReadOnly.locator('code').textContent()).toBe('touch');
  expect(await approval.locator('.approval-timer').textContent()).toMatch(/^Denied automatically in (10:00|9:[0-5]\d)$/);
  for (const label of ['Allow once', 'Allow for this session', 'Deny']) expect(await approval.locator(`button[aria-label="${label}"]`).isEnabled()).toBe(true);
  expect(await page.locator(`${sel.tool}[data-tool="terminal"]`).getAttribute('data-status')).toBe('pending');
  // Nobody was typing, so the card has the focus and the buttons are one Tab away.
  expect(await focused(page)).toBe('approval');
  // The end of the transcript says what the run waits for; Stop stays available.
  expect(await page.evaluate((selector) => getComputedStyle(document.querySelector(selector)!, '::after').content, sel.transcript)).toBe('"Waiting for your decision"');
  expect(await page.locator(sel.stop).isEnabled()).toBe(true);
  expect(existsSync(inWorkFolder(hearth, sessionId, 'made.txt'))).toBe(false);
  await screenshot(page, 'approval-waiting-light');

  await approval.locator(sel.allowOnce).click();
  expect(await outcomeOf(approval)).toBe('Allowed by you');
  expect(await approval.locator('button').count()).toBe(0);
  await page.locator(`${sel.tool}[data-tool="terminal"][data-status="done"]`).waitFor();
  await waitForAnswer(page, 'Made it.');
  expect(existsSync(inWorkFolder(hearth, sessionId, 'made.txt'))).toBe(true);
  const decided = (await hearth.request('GET', `/approvals?status=all&session_id=${sessionId}`)).body.approvals.find((row: any) => row.subject === 'touch made.txt');
  expect(decided).toMatchObject({ decision: 'allow', by: 'user', remember: 'once' });
  await screenshot(page, 'approval-allowed-light');

  // The stored history has no pending card, and the card still says who decided.
  await page.reload();
  await waitForApp(page);
  await waitForAnswer(page, 'Made it.');
  const reloaded = approvalOf(page);
  expect(await outcomeOf(reloaded)).toBe('Allowed by you');
  expect(await reloaded.locator('.approval-subject').textContent()).toBe('touch made.txt');
  expect(await page.locator(`${sel.approval} button`).count()).toBe(0);
}

/** Deny, seen in dark colours (the screenshots); the page goes back to light after. */
async function deny(hearth: Hearth, page: Page, sessionId: string): Promise<void> {
  await setColorScheme(page, 'dark');
  hearth.llm.script({ toolCalls: [terminal('touch denied.txt')] }, { content: 'Understood, I left the file alone.' });
  const before = hearth.llm.requests.length;
  await sendMessage(page, 'Make a file');
  const approval = approvalOf(page);
  await approval.waitFor();
  await screenshot(page, 'approval-waiting-dark');

  await approval.locator(sel.deny).click();
  expect(await outcomeOf(approval)).toBe('Denied by you');
  await page.locator(`${sel.tool}[data-tool="terminal"][data-status="failed"]`).waitFor();
  await waitForAnswer(page, 'Understood, I left the file alone.');
  await waitForIdle(page);
  expect(existsSync(inWorkFolder(hearth, sessionId, 'denied.txt'))).toBe(false);
  // The model was told the person denied it (in the request after the one that asked for the call).
  expect(JSON.stringify(hearth.llm.requests[before + 1]!.body.messages)).toContain('denied');
  await screenshot(page, 'approval-denied-dark');
  await setColorScheme(page, 'light');
}

async function fromTheKeyboard(hearth: Hearth, page: Page, sessionId: string): Promise<void> {
  hearth.llm.script({ toolCalls: [terminal('touch first.txt')] }, { toolCalls: [terminal('touch second.txt')] }, { content: 'One of two.' });
  await sendMessage(page, 'Make two files');

  await approvalOf(page, 0).waitFor();
  expect(await focused(page)).toBe('approval');
  await page.keyboard.press('Tab');
  expect(await focused(page)).toBe('Allow once');
  await page.keyboard.press('Enter');
  expect(await outcomeOf(approvalOf(page, 0))).toBe('Allowed by you');

  // The next card takes the focus as it appears; Deny is the third button.
  const second = approvalOf(page, 1);
  await second.locator(sel.deny).waitFor();
  await page.waitForFunction(() => (document.activeElement as HTMLElement | null)?.dataset.role === 'approval');
  for (let index = 0; index < 3; index += 1) await page.keyboard.press('Tab');
  expect(await focused(page)).toBe('Deny');
  await page.keyboard.press('Space');
  expect(await outcomeOf(second)).toBe('Denied by you');
  await waitForAnswer(page, 'One of two.');
  expect(existsSync(inWorkFolder(hearth, sessionId, 'first.txt'))).toBe(true);
  expect(existsSync(inWorkFolder(hearth, sessionId, 'second.txt'))).toBe(false);
}

async function allowForSession(hearth: Hearth, page: Page): Promise<void> {
  hearth.llm.script(
    { toolCalls: [terminal('touch again.txt')] },
    { toolCalls: [terminal('touch again.txt')] },
    { toolCalls: [terminal('touch other.txt')] },
    { content: 'Touched twice.' },
  );
  await sendMessage(page, 'Touch it twice');
  await approvalOf(page, 0).locator(sel.allowForSession).click();
  expect(await outcomeOf(approvalOf(page, 0))).toBe('Allowed for this session');

  // The same command ran at once; another one asks again.
  await page.locator(`${sel.tool}[data-tool="terminal"]`).nth(1).and(page.locator('[data-status="done"]')).waitFor();
  expect(await approvalOf(page, 1).count()).toBe(0);
  await approvalOf(page, 2).locator(sel.allowOnce).click();
  expect(await outcomeOf(approvalOf(page, 2))).toBe('Allowed by you');
  await waitForAnswer(page, 'Touched twice.');
}

async function subAgentAsks(hearth: Hearth, page: Page, sessionId: string): Promise<void> {
  hearth.llm.script(
    { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Make a file' } }] },
    { toolCalls: [terminal('touch from-subagent.txt')] },
    { content: 'Sub-agent made it.' },
    { content: 'The sub-agent is done.' },
  );
  await sendMessage(page, 'Delegate it');
  const spawn = page.locator(`${sel.tool}[data-tool="spawn_agent"]`);
  const nested = spawn.locator('.subagent-activity [data-role="tool"][data-tool="terminal"]');
  const approval = nested.locator(sel.approval);
  await approval.waitFor();
  expect(await nested.getAttribute('data-subagent')).toBe('true');
  expect(await approval.locator('.approval-subject').textContent()).toBe('touch from-subagent.txt');
  await screenshot(page, 'approval-subagent');

  await approval.locator(sel.allowOnce).click();
  expect(await outcomeOf(approval)).toBe('Allowed by you');
  await waitForAnswer(page, 'The sub-agent is done.');
  expect(await nested.getAttribute('data-status')).toBe('done');
  expect(existsSync(inWorkFolder(hearth, sessionId, 'from-subagent.txt'))).toBe(true);
}

/** Last in its server: the answer scripted after the call is never asked for, and would stay queued. */
async function stopWhileWaiting(hearth: Hearth, page: Page, sessionId: string): Promise<void> {
  hearth.llm.script({ toolCalls: [terminal('touch stopped.txt')] }, { content: 'not reached' });
  await sendMessage(page, 'Make a file');
  const approval = approvalOf(page);
  await approval.waitFor();
  await page.locator(sel.stop).click();
  expect(await outcomeOf(approval)).toBe('Denied: the run was stopped');
  await waitForIdle(page);
  expect(await page.locator(`${sel.tool}[data-tool="terminal"]`).getAttribute('data-status')).toBe('failed');
  expect(existsSync(inWorkFolder(hearth, sessionId, 'stopped.txt'))).toBe(false);
}

describe.skipIf(skipBrowserTests)('approvals in the browser', () => {
  const browser = useBrowser();

  it('in one page, a session each: shows the waiting call in full with a countdown, runs it once allowed, and says who allowed it, also after a reload; Deny leaves no side effect, and the model answers on; used from the keyboard (Tab to a button, Enter or Space); Allow for this session lets the same command run again without asking; asks inside the spawn_agent card for a sub-agent\'s call; Stop ends a run whose call waits, and the card says the run was stopped', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    const { page, sessionId } = await browser.openSession(hearth, admin);
    await allowOnce(hearth, page, sessionId);
    const next = async () => {
      const id = await hearth.createSession(admin);
      await showSession(page, id);
      return id;
    };
    await deny(hearth, page, await next());
    await fromTheKeyboard(hearth, page, await next());
    await next();
    await allowForSession(hearth, page);
    await subAgentAsks(hearth, page, await next());
    await stopWhileWaiting(hearth, page, await next());
  });

  it('denies by itself when nobody answers in time', browserTest, async () => {
    const hearth = await browser.hearth({ env: { APPROVAL_TIMEOUT_S: '2' } });
    hearth.llm.script({ toolCalls: [terminal('touch late.txt')] }, { content: 'Nobody answered, so I did nothing.' });
    const { page, sessionId } = await browser.openSession(hearth, admin);
    await sendMessage(page, 'Make a file');
    const approval = approvalOf(page);
    await approval.waitFor();
    expect(await approval.locator('.approval-timer').textContent()).toMatch(/^Denied automatically in 0:0[0-2]$/);
    expect(await outcomeOf(approval)).toBe('Denied: nobody answered in time');
    await waitForAnswer(page, 'Nobody answered, so I did nothing.');
    expect(existsSync(inWorkFolder(hearth, sessionId, 'late.txt'))).toBe(false);
  });

  it('a second tab joining late sees the waiting card and can answer it; a reload shows it again; then, in that server and page, badges a session waiting in the background, and clears the badge once it is approved over REST', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ toolCalls: [terminal('touch shared.txt')] }, { content: 'Done from the other tab.' });
    const { page: first, sessionId } = await browser.openSession(hearth, admin);
    await sendMessage(first, 'Make a file');
    await approvalOf(first).waitFor();

    const second = await browser.openPage(hearth, { hash: sessionId });
    await waitForApp(second);
    const late = approvalOf(second);
    await late.locator(sel.allowOnce).waitFor();
    expect(await late.locator('.approval-subject').textContent()).toBe('touch shared.txt');
    expect(await second.locator(`${sel.tool}[data-tool="terminal"]`).count()).toBe(1);

    await first.reload();
    await waitForApp(first);
    await approvalOf(first).locator(sel.allowOnce).waitFor();
    expect(await first.locator(sel.approval).count()).toBe(1);

    await late.locator(sel.allowOnce).click();
    expect(await outcomeOf(late)).toBe('Allowed by you');
    expect(await outcomeOf(approvalOf(first))).toBe('Allowed by you');
    await waitForAnswer(first, 'Done from the other tab.');
    await waitForAnswer(second, 'Done from the other tab.');
    expect(existsSync(inWorkFolder(hearth, sessionId, 'shared.txt'))).toBe(true);
    await second.close();

    // The badge: the first page goes on in a session of its own while another waits in the background.
    const page = first;
    const waiting = await hearth.createSession(admin);
    await hearth.request('PATCH', `/sessions/${waiting}`, { title: 'Background job' });
    const open = await hearth.createSession();
    await showSession(page, open);

    hearth.llm.script({ toolCalls: [terminal('touch background.txt')] }, { content: 'Background done.' });
    const turn = hearth.request('POST', `/sessions/${waiting}/messages`, { content: 'Make a file', wait: 'end' });
    // Listed from its first message on (the list shows no empty session).
    await page.locator(`${sel.sessionItem}[data-session-id="${waiting}"]`).waitFor();
    const badge = page.locator(`${sel.sessionItem}[data-session-id="${waiting}"] [aria-label="1 approval waiting"]`);
    await badge.waitFor();
    expect(await badge.textContent()).toBe('1');
    expect(await page.locator(`${sel.sessionItem}[data-session-id="${open}"] .approval-badge`).count()).toBe(0);
    await screenshot(page, 'approval-sidebar-badge');

    // A page opened now learns what waits from the events socket's hello; one whose socket dropped, when it reconnects.
    const later = await browser.openPage(hearth, { hash: open });
    await later.locator(`${sel.sessionItem}[data-session-id="${waiting}"] [aria-label="1 approval waiting"]`).waitFor();
    // A session created while the sockets are down is missed as an event, and read with the list on reconnecting.
    for (const client of hearth.app.websocketServer.clients) client.terminate();
    const createdMeanwhile = await hearth.createSession();
    // Written straight to the store: a listed session has a message, and no event may announce this one.
    await appendMessage(hearth.deps.db, createdMeanwhile, { role: 'user', content: 'Written while the sockets were down' });
    await page.locator(`${sel.sessionItem}[data-session-id="${createdMeanwhile}"]`).waitFor();
    await badge.waitFor();

    const callId = await pendingCallId(hearth, waiting);
    expect((await hearth.request('POST', `/sessions/${waiting}/approvals/${callId}`, { decision: 'allow' })).status).toBe(200);
    await badge.waitFor({ state: 'detached' });
    expect((await turn).body.content).toBe('Background done.');
    expect(existsSync(inWorkFolder(hearth, waiting, 'background.txt'))).toBe(true);

    // Opening that session afterwards shows the decision on its card. Its finished run moves its entry to the top of the
    // list: it is clicked once there, so the click cannot land on another entry sliding into its place.
    await page.locator(`${sel.sessionItem}:first-child[data-session-id="${waiting}"]`).waitFor();
    await page.locator(`${sel.sessionItem}[data-session-id="${waiting}"] .session-link`).click();
    await waitForAnswer(page, 'Background done.');
    expect(await outcomeOf(approvalOf(page))).toBe('Allowed by you');
  });

  it('on a phone (one page, dark then light): marks the menu button while another session waits, and the drawer shows which; lays the card out without overflow, a long command wrapped and whole', browserTest, async () => {
    const hearth = await browser.hearth();
    const waiting = await hearth.createSession(admin);
    await hearth.request('PATCH', `/sessions/${waiting}`, { title: 'Nightly maintenance' });
    const open = await hearth.createSession();
    const page = await browser.openPage(hearth, { hash: open, viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    await waitForApp(page);
    const menu = page.locator(sel.openSessions);
    expect(await menu.getAttribute('data-approvals')).toBeNull();

    hearth.llm.script({ toolCalls: [terminal('touch nightly.txt')] }, { content: 'Maintenance done.' });
    const turn = hearth.request('POST', `/sessions/${waiting}/messages`, { content: 'Run the maintenance', wait: 'end' });
    await page.locator(`${sel.openSessions}[data-approvals="1"]`).waitFor();
    expect(await menu.getAttribute('aria-description')).toBe('1 approval waiting in other sessions');
    await screenshot(page, 'approval-phone-menu-dark');
    await menu.click();
    const entry = page.locator(`${sel.sessionItem}[data-session-id="${waiting}"]`);
    await entry.locator('[aria-label="1 approval waiting"]').waitFor();
    await page.waitForFunction(() => document.getElementById('sidebar')!.getBoundingClientRect().left === 0);
    await screenshot(page, 'approval-phone-drawer-dark');

    // Opening that session answers the question there; the dot goes once nothing waits elsewhere.
    await entry.locator('.session-link').click();
    const approval = approvalOf(page);
    await approval.locator(sel.allowOnce).click();
    expect(await outcomeOf(approval)).toBe('Allowed by you');
    expect((await turn).body.content).toBe('Maintenance done.');
    await page.locator(`${sel.openSessions}:not([data-approvals])`).waitFor();

    // A long command's card at phone width, in light colours, in another session of the same page.
    await setColorScheme(page, 'light');
    const longPath = `/srv/backups/${'nightly-archive-'.repeat(12)}final.tar.gz`;
    const command = `tar -czf ${longPath} /etc /var/lib/hearth --exclude=*.tmp && echo archived > /tmp/last-backup.log`;
    hearth.llm.script({ toolCalls: [terminal(command)] }, { content: 'Archived.' });
    await showSession(page, await hearth.createSession(admin));
    await sendMessage(page, 'Archive the config');
    const archive = approvalOf(page);
    await archive.locator(sel.deny).waitFor();
    expect(await archive.locator('.approval-subject').textContent()).toBe(command);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const subject = await archive.locator('.approval-subject').boundingBox();
    expect(subject!.x + subject!.width).toBeLessThanOrEqual(390);
    for (const button of [sel.allowOnce, sel.allowForSession, sel.deny]) {
      const box = await archive.locator(button).boundingBox();
      expect(box!.x + box!.width, button).toBeLessThanOrEqual(390);
      expect(box!.height, button).toBeGreaterThanOrEqual(32);
    }
    await screenshot(page, 'approval-phone-light');
    await archive.locator(sel.deny).click();
    await waitForAnswer(page, 'Archived.');
  });
});

describe.skipIf(skipBrowserTests)('the page follows the whole Hearth over /ws/events', () => {
  const browser = useBrowser();

  // One server and page, in this order: the list starts empty, the Tools panel and profiles are
  // followed with no session open, then sessions are opened through the address.
  it('shows sessions created, renamed, pinned and deleted elsewhere without a reload; follows tools_changed in the Tools panel and the profile lists with no session open; shows the code write_tool would install as highlighted TypeScript with its permissions, and installs nothing when denied; says so when the open session is deleted elsewhere', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator('#session-list-empty').waitFor();

    // A session joins the list with its first message, from whichever client it comes.
    const created = await hearth.createSession();
    const item = page.locator(`${sel.sessionItem}[data-session-id="${created}"]`);
    expect((await hearth.request('POST', `/sessions/${created}/messages`, { content: 'First words' })).status).toBe(200);
    await item.waitFor();
    await hearth.request('PATCH', `/sessions/${created}`, { title: 'Named elsewhere' });
    await item.locator('.session-title').filter({ hasText: 'Named elsewhere' }).waitFor();

    // A run started elsewhere (here over REST) shows while it answers, and its title comes with it.
    const second = await hearth.createSession();
    hearth.llm.script({ content: 'Answered elsewhere.', delayMs: 300 });
    const turn = hearth.request('POST', `/sessions/${second}/messages`, { content: 'Hello from curl' });
    await page.locator(`${sel.sessionItem}[data-session-id="${second}"] .running-dot`).waitFor();
    expect(await page.locator(sel.sessionItem).first().getAttribute('data-session-id')).toBe(second);
    await turn;
    await page.locator(`${sel.sessionItem}[data-session-id="${second}"] .running-dot`).waitFor({ state: 'detached' });
    await hearth.request('PATCH', `/sessions/${created}/pin`, { pinned: true });
    await page.locator(`${sel.sessionItem}[data-session-id="${created}"][data-pinned="true"]`).waitFor();
    expect(await page.locator(sel.sessionItem).first().getAttribute('data-session-id')).toBe(created);

    expect((await hearth.request('DELETE', `/sessions/${created}`)).status).toBe(204);
    await item.waitFor({ state: 'detached' });

    // tools_changed reaches the Tools panel, and a new profile the profile lists, with no session open.
    await page.locator('button.panel-toggle[aria-label="Tools"]').click();
    const panel = page.locator('#tools-panel');
    await panel.locator('li[data-tool-name="todo"]').waitFor();

    await writeFile(
      path.join(hearth.config.TOOLS_DIR, 'coin_flip.ts'),
      `export const name = 'coin_flip';
export const description = 'Flips a coin.';
export const parameters = { type: 'object', properties: {}, required: [] };
export async function execute() { return Math.random() < 0.5 ? 'heads' : 'tails'; }
`,
    );
    await panel.locator('li[data-tool-name="coin_flip"][data-source="user"]').waitFor();

    await writeFile(
      path.join(hearth.config.PROFILES_DIR, 'gardener.md'),
      '---\nid: gardener\nname: Gardener\ndescription: Waters the plants.\ntools: [todo]\n---\nYou look after the garden.\n',
    );
    await page.locator(`${sel.sessionProfile} option[value="gardener"]`).waitFor({ state: 'attached' });
    await closePanel(page, 'Tools');

    // The code write_tool would install, in a secretary session.
    const code = [
      "export const name = 'list_processes';",
      "export const description = 'Lists the running processes.';",
      'export const permissions = { childProcess: true };',
      "export const parameters = { type: 'object', properties: {}, required: [] };",
      'export async function execute(params: Record<string, never>, ctx: unknown): Promise<string> {',
      "  return 'none';",
      '}',
      '',
    ].join('\n');
    hearth.llm.script({ toolCalls: [{ name: 'write_tool', arguments: { name: 'list_processes', code } }] }, { content: 'Not installed, then.' });
    await showSession(page, await hearth.createSession('secretary'));
    await sendMessage(page, 'Make a tool that lists processes');

    const card = page.locator(`${sel.tool}[data-tool="write_tool"]`);
    const approval = card.locator(sel.approval);
    await approval.waitFor();
    const written = card.locator('[data-role="written-tool"]');
    expect(await written.isVisible()).toBe(true);
    // The code reads as code, line by line, coloured as TypeScript, not as a JSON string full of \n.
    expect(await written.locator('code.language-typescript').textContent()).toBe(code);
    expect(await written.locator('code .hljs-keyword').first().textContent()).toBe('export');
    expect(await written.locator('[data-role="written-tool-permissions"]').textContent()).toBe('Asks for permissions beyond the sandbox: childProcess');
    expect(await written.evaluate((node) => node.compareDocumentPosition(node.closest('article')!.querySelector('[data-role="approval"]')!) & Node.DOCUMENT_POSITION_FOLLOWING)).toBeTruthy();
    await screenshot(page, 'approval-write-tool');
    // At phone width its code scrolls sideways, so a keyboard must reach it (axe: scrollable-region-focusable).
    const desktop = page.viewportSize()!;
    await page.setViewportSize({ width: 360, height: 740 });
    await expectNoViolations(page, 'the write_tool card waiting, at 360 px');
    await page.setViewportSize(desktop);

    await approval.locator(sel.deny).click();
    expect(await outcomeOf(approval)).toBe('Denied by you');
    await waitForAnswer(page, 'Not installed, then.');
    expect(existsSync(path.join(hearth.config.TOOLS_DIR, 'list_processes.ts'))).toBe(false);

    // Last: the open session deleted elsewhere.
    const doomed = await hearth.createSession();
    await showSession(page, doomed);
    // Once the page has read the session (its own GET would otherwise meet the delete: a 404 the browser logs).
    await page.locator(`${sel.transcript} .empty-state`).waitFor();
    expect((await hearth.request('DELETE', `/sessions/${doomed}`)).status).toBe(204);
    await page.locator(sel.transcript).filter({ hasText: 'This session no longer exists.' }).waitFor();
    await page.locator(`${sel.sessionItem}[data-session-id="${doomed}"]`).waitFor({ state: 'detached' });
  });
});
