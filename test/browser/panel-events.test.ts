/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// An open side panel follows what happens in the page without a click: the Context panel the
// session that opens and each finished turn, the Schedules panel a notification and the events
// socket coming back. A closed panel reads nothing.
import { describe, expect, it } from 'vitest';
import type { Hearth } from '../support/hearth-server.ts';
import { browserTest, openPanel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForEventsSocket, waitForIdle } from '../support/browser.ts';



async function messagesInContext(hearth: Hearth, sessionId: string): Promise<number> {
  return (await hearth.request('GET', `/sessions/${sessionId}/context`)).body.messages.length;
}

async function createSchedule(hearth: Hearth, name: string): Promise<string> {
  const created = await hearth.request('POST', '/schedules', { name, prompt: 'Summarise the night', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' });
  expect(created.status).toBe(201);
  return created.body.schedule.id;
}

describe.skipIf(skipBrowserTests)('an open panel follows the page', () => {
  const browser = useBrowser();

  it('the Context panel shows the session that opens, and again after each finished turn', browserTest, async () => {
    const hearth = await browser.hearth();
    const other = await hearth.createSession();
    hearth.llm.script({ content: 'Answer in the other session.' }, { content: 'Second answer in the other session.' });
    await hearth.request('POST', `/sessions/${other}/messages`, { content: 'Question in the other session' });
    const otherMessages = await messagesInContext(hearth, other);
    expect(otherMessages).toBeGreaterThan(0);

    const { page, sessionId } = await browser.openSession(hearth);
    const panel = await openPanel(page, 'Context');
    await panel.getByText(/ in 0 messages\.$/).waitFor();

    await page.evaluate((id) => (location.hash = encodeURIComponent(id)), other);
    await waitForAnswer(page, 'Answer in the other session.');
    await panel.getByText(new RegExp(` in ${otherMessages} messages\\.$`)).waitFor();

    await sendMessage(page, 'Another question');
    await waitForAnswer(page, 'Second answer in the other session.');
    await waitForIdle(page);
    const grown = await messagesInContext(hearth, other);
    expect(grown).toBeGreaterThan(otherMessages);
    await panel.getByText(new RegExp(` in ${grown} messages\\.$`)).waitFor();
    expect(await messagesInContext(hearth, sessionId)).toBe(0);
  });

  it('the Schedules panel reads the list again on a notification and after the events socket reconnects, and not while closed', browserTest, async () => {
    const hearth = await browser.hearth();
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await waitForEventsSocket(page);
    const panel = await openPanel(page, 'Schedules');
    await panel.locator('.schedules-empty').waitFor();

    // Creating a schedule over REST tells the page nothing; a notification (a schedule's run raises one) does.
    const morning = await createSchedule(hearth, 'Morning brief');
    hearth.deps.notifications.raise({ title: 'Morning brief ran', body: 'All quiet.' });
    await panel.locator(`li[data-schedule-id="${morning}"]`).waitFor();

    // Every socket drops; once the events socket is back, the panel reads what changed meanwhile.
    const evening = await createSchedule(hearth, 'Evening brief');
    for (const client of hearth.app.websocketServer.clients) client.terminate();
    await panel.locator(`li[data-schedule-id="${evening}"]`).waitFor();

    // Closed, it asks for nothing when a notification arrives.
    await page.locator('header button.panel-toggle[aria-label="Schedules"]').click();
    await panel.waitFor({ state: 'hidden' });
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    hearth.deps.notifications.raise({ title: 'Evening brief ran', body: 'All quiet.' });
    await page.locator('#notification-count', { hasText: '2' }).waitFor();
    await page.evaluate(() => fetch('/health'));
    expect(asked).toContain('/health');
    expect(asked).not.toContain('/schedules');
  });
});
