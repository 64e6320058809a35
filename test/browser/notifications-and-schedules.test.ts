/// <reference lib="dom" />
// The notification bell and the Schedules panel (issue 17; docs/agent.md, "Schedules, reminders and notifications"): a notification raised in the
// running app reaches the open page live, and the browser's own notification once the person allowed
// them; the panel lists, pauses, resumes and deletes schedules, and previews the next runs while the
// person types; a user message a schedule sent is marked so in the transcript, also live; a schedule
// and a person's run waiting for a free place say `queued` (issue 24). The notification checks walk one
// page and the panel's checks another (each server's counts and lists are read as they follow from
// the steps before); the two timing tests keep their own clocks.
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appendMessages } from '../../src/store/messages-repository.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { fullChromiumPath } from '../support/chromium.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { browserTest, closePanel, showSession, screenshot, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForEventsSocket, type BrowserHarness } from '../support/browser.ts';

const bellSelector = 'header button.notification-bell';
const popoverSelector = '#notification-popover';
const schedulesSelector = 'aside.panel[aria-label="Schedules"]';


function raise(hearth: Hearth, notification: { title: string; body: string; sessionId?: string }) {
  return hearth.deps.notifications.raise(notification);
}

async function openSchedulesPanel(page: Page) {
  await page.locator('header button.panel-toggle[aria-label="Schedules"]').click();
  const panel = page.locator(schedulesSelector);
  await panel.waitFor({ state: 'visible' });
  return panel;
}

/** The bell: an unread count from hello, a notification live, its session opened from the list, Mark all read. Leaves 0 unread and the list closed. */
async function bellLiveThenRead(page: Page, hearth: Hearth, sessionId: string): Promise<void> {
  const bell = page.locator(bellSelector);
  await page.locator(`${bellSelector}[data-unread="1"]`).waitFor();
  expect(await page.locator('#notification-count').textContent()).toBe('1');
  expect(await page.locator('#notification-count').isVisible()).toBe(true);

  await raise(hearth, { title: 'Backup <b>failed</b>', body: 'Disk /dev/sdb is full', sessionId });
  await page.locator(`${bellSelector}[data-unread="2"]`).waitFor();
  expect(await page.locator('#notification-count').textContent()).toBe('2');
  expect(await bell.getAttribute('aria-label')).toBe('Notifications, 2 unread');

  await bell.click();
  const popover = page.locator(popoverSelector);
  await popover.waitFor({ state: 'visible' });
  const items = popover.locator('.notification-list > li');
  await page.waitForFunction((selector) => document.querySelectorAll(`${selector} .notification-list > li`).length === 2, popoverSelector);
  // Newest first; the server's text stays text.
  expect(await items.locator('.notification-title').allTextContents()).toEqual(['Backup <b>failed</b>', 'Earlier finding']);
  expect(await items.locator('.notification-title b').count()).toBe(0);
  expect(await items.first().getAttribute('data-read')).toBe('false');
  // Browser notifications are offered, never asked for on load.
  expect(await popover.locator('button.allow-notifications').count()).toBe(1);
  await screenshot(page, 'notification-bell');

  await items.first().locator('button.notification-item').click();
  await page.waitForFunction((id) => decodeURIComponent(location.hash.slice(1)) === id, sessionId);
  await page.locator('#session-title', { hasText: 'Nightly backup check' }).waitFor();
  await page.locator(`${bellSelector}[data-unread="1"]`).waitFor();
  expect(await popover.isHidden()).toBe(true);
  const unread = (await hearth.request('GET', '/notifications?unread=1')).body;
  expect(unread.unread_count).toBe(1);
  expect(unread.notifications.map((notification: { title: string }) => notification.title)).toEqual(['Earlier finding']);

  // Mark all read: the count goes and the server agrees.
  await bell.click();
  await popover.waitFor({ state: 'visible' });
  await popover.locator('.notification-list > li[data-read="true"]').first().waitFor();
  await popover.locator('button.mark-all-read').click();
  await page.locator(`${bellSelector}[data-unread="0"]`).waitFor();
  expect(await page.locator('#notification-count').isHidden()).toBe(true);
  expect((await hearth.request('GET', '/notifications?unread=1')).body.unread_count).toBe(0);
  await page.waitForFunction((selector) => document.querySelectorAll(`${selector} .notification-list > li[data-read="false"]`).length === 0, popoverSelector);
  await page.keyboard.press('Escape');
  await popover.waitFor({ state: 'hidden' });
}

/**
 * Browser notifications once the person allowed them, only while the page is in the background; clicking one opens
 * its session (another one is open before). Starts with 0 unread; leaves one unread and the page out of focus.
 */
async function browserNotificationOnceAllowed(page: Page, hearth: Hearth, sessionId: string): Promise<void> {
  const context = page.context();
  await showSession(page, await hearth.createSession());
  // Records each browser notification the page makes; the real Notification is still made (the page looks it up at each use).
  await page.evaluate(() => {
    const Original = window.Notification;
    const made: { title: string; body: string | undefined; notification: Notification }[] = [];
    (window as unknown as { madeNotifications: typeof made }).madeNotifications = made;
    window.Notification = class extends Original {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        made.push({ title, body: options?.body, notification: this });
      }
    };
  });
  const made = () => page.evaluate(() => (window as unknown as { madeNotifications: { title: string; body?: string }[] }).madeNotifications.map(({ title, body }) => ({ title, body })));

  // Not asked on load: the bell offers it.
  expect(await page.evaluate(() => Notification.permission)).toBe('default');
  await page.locator(bellSelector).click();
  // Drawn at once, then again once the list has loaded: the button to click is the second one.
  await page.locator(`${popoverSelector}[data-state="loaded"]`).waitFor();
  const popover = page.locator(popoverSelector);
  const allow = popover.locator('button.allow-notifications');
  await allow.waitFor();
  // The person will answer the browser's question with Allow.
  await context.grantPermissions(['notifications'], { origin: hearth.baseUrl });
  await allow.click();
  await popover.locator('.notification-permission', { hasText: 'Browser notifications are on' }).waitFor();
  expect(await allow.count()).toBe(0);
  await page.keyboard.press('Escape');

  // While the page has the focus the bell is enough.
  await raise(hearth, { title: 'Seen in the page', body: 'The page has the focus' });
  await page.locator(`${bellSelector}[data-unread="1"]`).waitFor();
  expect(await made()).toEqual([]);

  // The person is in another window: the browser shows it. (Playwright lets every page think it
  // has the focus; switched off, the page sees it lost the focus to the other one.)
  const elsewhere = await context.newPage();
  await elsewhere.bringToFront();
  const devtools = await context.newCDPSession(page);
  await devtools.send('Emulation.setFocusEmulationEnabled', { enabled: false });
  expect(await page.evaluate(() => document.hasFocus())).toBe(false);
  await raise(hearth, { title: 'Backup failed', body: 'Disk /dev/sdb is full', sessionId });
  await page.waitForFunction(() => (window as unknown as { madeNotifications: unknown[] }).madeNotifications.length === 1);
  expect(await made()).toEqual([{ title: 'Backup failed', body: 'Disk /dev/sdb is full' }]);
  await page.locator(`${bellSelector}[data-unread="2"]`).waitFor();

  // Clicking it opens its session and marks it read.
  await page.evaluate(() => (window as unknown as { madeNotifications: { notification: Notification }[] }).madeNotifications[0]!.notification.dispatchEvent(new Event('click')));
  await page.waitForFunction((id) => decodeURIComponent(location.hash.slice(1)) === id, sessionId);
  await page.locator('#session-title', { hasText: 'Nightly backup check' }).waitFor();
  await page.locator(`${bellSelector}[data-unread="1"]`).waitFor();
  const unread = (await hearth.request('GET', '/notifications?unread=1')).body;
  expect(unread.notifications.map((notification: { title: string }) => notification.title)).toEqual(['Seen in the page']);
}

/** A notification body: sanitised Markdown in the list, plain text in a browser notification. */
async function markdownBody(page: Page, hearth: Hearth): Promise<void> {
  // Stands in for the browser's notifications: permission granted, the page in the background, each shown body recorded.
  await page.evaluate(() => {
    const shown: { title: string; body: string }[] = [];
    (window as any).shownNotifications = shown;
    class RecordingNotification extends EventTarget {
      static permission = 'granted';
      static requestPermission = async () => 'granted';
      constructor(title: string, options: { body: string }) {
        super();
        shown.push({ title, body: options.body });
      }
      close() {}
    }
    (window as any).Notification = RecordingNotification;
    document.hasFocus = () => false;
  });
  const body = ['**Fake model here.** Your `df -h` says:', '', '> /dev/sdb is 97% full', '', '- clean /tmp', '- [docs](https://example.org)', '', '<img src=x onerror="window.hacked=1"><script>window.hacked=1</script>'].join('\n');
  await raise(hearth, { title: 'Disk check', body });
  await page.waitForFunction(() => (window as any).shownNotifications.length === 1);
  const [shown] = await page.evaluate(() => (window as any).shownNotifications);
  expect(shown).toEqual({
    title: 'Disk check',
    body: 'Fake model here. Your df -h says:\n/dev/sdb is 97% full\n• clean /tmp\n• docs\n<img src=x onerror="window.hacked=1"><script>window.hacked=1</script>',
  });

  await page.locator(bellSelector).click();
  // The list holds the earlier steps' notifications too: this one's entry.
  const rendered = page.locator(`${popoverSelector} .notification-list > li`).filter({ has: page.locator('.notification-title', { hasText: 'Disk check' }) }).locator('.notification-body');
  await rendered.waitFor();
  expect(await rendered.locator('strong').textContent()).toBe('Fake model here.');
  expect(await rendered.locator('code').textContent()).toBe('df -h');
  expect(await rendered.locator('blockquote').textContent()).toContain('/dev/sdb is 97% full');
  expect(await rendered.locator('li').allTextContents()).toEqual(['clean /tmp', 'docs']);
  expect(await rendered.locator('a').getAttribute('rel')).toContain('noopener');
  // Raw HTML stays text; nothing ran.
  expect(await rendered.locator('img, script').count()).toBe(0);
  expect(await rendered.textContent()).toContain('<script>');
  expect(await page.evaluate(() => (window as any).hacked)).toBeUndefined();
  await screenshot(page, 'notification-markdown');
}

/** A stored session with a hand-typed and a scheduled user message: only the second is marked. */
async function storedScheduledMessage(hearth: Hearth): Promise<string> {
  const sessionId = await hearth.createSession();
  await appendMessages(hearth.deps.db, sessionId, [
    { role: 'user', content: 'Typed by hand' },
    { role: 'assistant', content: 'Noted.' },
    { role: 'user', content: 'Check the backups', scheduled: true, schedule_id: 'nightly' },
    { role: 'assistant', content: 'All good.' },
  ]);
  return sessionId;
}

async function scheduledMessageMarked(page: Page): Promise<void> {
  await page.locator('#transcript article.item.user[data-scheduled="true"]').waitFor();
  const users = page.locator('#transcript article.item.user');
  expect(await users.count()).toBe(2);
  expect(await users.nth(0).locator('.scheduled-mark').count()).toBe(0);
  expect(await users.nth(1).locator('.scheduled-mark').textContent()).toBe('scheduled');
  expect(await users.nth(1).locator('.user-text').textContent()).toBe('Check the backups');
}

/** A schedule created over REST (the only one) is listed; pause, resume and delete work. Leaves no schedule. */
async function restScheduleListed(page: Page, hearth: Hearth, scheduleId: string): Promise<Locator> {
  const panel = await openSchedulesPanel(page);
  const row = panel.locator(`li[data-schedule-id="${scheduleId}"]`);
  await row.waitFor();
  expect(await row.locator('.schedule-name').textContent()).toBe('Morning <i>brief</i>');
  expect(await row.locator('.schedule-name i').count()).toBe(0);
  expect(await row.locator('.schedule-when').textContent()).toBe('weekdays at 09:00 (0 9 * * 1-5) · Europe/Berlin');
  expect(await row.locator('.schedule-next').textContent()).toMatch(/^Next: .*09:00/);
  expect(await row.locator('.schedule-last').textContent()).toBe('Last: never run');
  expect(await row.getAttribute('data-enabled')).toBe('true');
  await screenshot(page, 'schedules-panel');

  await row.locator('button.schedule-toggle', { hasText: 'Pause' }).click();
  await panel.locator(`li[data-schedule-id="${scheduleId}"][data-enabled="false"]`).waitFor();
  expect((await hearth.request('GET', '/schedules')).body.schedules[0].enabled).toBe(false);
  expect(await row.locator('.schedule-state').textContent()).toBe('paused');
  expect(await row.locator('.schedule-next').textContent()).toBe('Next: not planned');

  await row.locator('button.schedule-toggle', { hasText: 'Resume' }).click();
  await panel.locator(`li[data-schedule-id="${scheduleId}"][data-enabled="true"]`).waitFor();
  expect((await hearth.request('GET', '/schedules')).body.schedules[0].enabled).toBe(true);

  await row.locator('button.schedule-delete').click();
  await panel.locator('.schedules-empty').waitFor();
  expect(await row.count()).toBe(0);
  expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
  return panel;
}

/** Shows `sessionId` and reads the Schedules panel again (closed and opened, as the person would), so it lists schedules made over REST meanwhile. */
async function showWithSchedules(page: Page, sessionId: string): Promise<Locator> {
  await closePanel(page, 'Schedules');
  await showSession(page, sessionId);
  return openSchedulesPanel(page);
}

/** A schedule run's user message shows live, marked scheduled, in its open session; the bell counts its notification (the server's first). */
async function scheduledRunLive(page: Page, hearth: Hearth): Promise<void> {
  const sessionId = await hearth.createSession();
  const created = await hearth.request('POST', '/schedules', { name: 'Backups', prompt: 'Check the backups', cron: '0 3 * * *', timezone: 'Europe/Berlin', session_id: sessionId });
  expect(created.status).toBe(201);
  const scheduleId: string = created.body.schedule.id;
  const panel = await showWithSchedules(page, sessionId);
  await panel.locator(`li[data-schedule-id="${scheduleId}"] .schedule-last[data-status="none"]`).waitFor();
  // Set in this page load: still there afterwards means nothing was reloaded.
  await page.evaluate(() => ((window as unknown as { sameLoad: boolean }).sameLoad = true));

  hearth.llm.script({ content: 'All backups are fresh.' });
  expect((await hearth.request('POST', `/schedules/${scheduleId}/run`)).status).toBe(202);
  const scheduled = page.locator('#transcript article.item.user[data-scheduled="true"]');
  await scheduled.waitFor();
  expect(await scheduled.locator('.user-text').textContent()).toBe('Check the backups');
  expect(await scheduled.locator('.scheduled-mark').textContent()).toBe('scheduled');
  await waitForAnswer(page, 'All backups are fresh.');
  expect(await page.locator('#transcript article.item.user').count()).toBe(1);
  expect(await page.evaluate(() => (window as unknown as { sameLoad?: boolean }).sameLoad)).toBe(true);
  // The finished run's notification refreshes the panel.
  await panel.locator(`li[data-schedule-id="${scheduleId}"] .schedule-last[data-status="ok"]`, { hasText: 'Last: succeeded' }).waitFor();
  await page.locator(`${bellSelector}[data-unread="1"]`).waitFor();
  await screenshot(page, 'scheduled-run-live');
}

/** With one place at the model and one run slot (the server's limits): a schedule waiting for a slot, and a person's run waiting for the model, say queued. */
async function queuedForSlotAndModel(page: Page, hearth: Hearth): Promise<void> {
  const holderSession = await hearth.createSession();
  const personSession = await hearth.createSession();
  // The holder's scheduled call keeps the only place at the model until its run is stopped.
  hearth.llm.respondWith((request) => {
    const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
    const last = messages.findLast((message) => message.role === 'user')?.content;
    return last === 'Hold the model' ? { hang: true } : { content: `Answered: ${last}` };
  });
  const schedule = async (name: string, prompt: string, sessionId?: string) => {
    const created = await hearth.request('POST', '/schedules', { name, prompt, cron: '0 3 * * *', timezone: 'Europe/Berlin', ...(sessionId && { session_id: sessionId }) });
    expect(created.status).toBe(201);
    return created.body.schedule.id as string;
  };
  const holder = await schedule('Holder', 'Hold the model', holderSession);
  const waiter = await schedule('Waiter', 'Wait your turn');
  const panel = await showWithSchedules(page, personSession);
  const requestsBefore = hearth.llm.requests.length;
  await panel.locator(`li[data-schedule-id="${holder}"] button.schedule-run`).click();
  await hearth.llm.waitForRequest(requestsBefore + 1);
  await panel.locator(`li[data-schedule-id="${waiter}"] button.schedule-run`).click();
  await panel.locator(`li[data-schedule-id="${waiter}"] .schedule-last[data-status="queued"]`, { hasText: 'Last: queued' }).waitFor();

  await sendMessage(page, 'Am I next?');
  await page.locator('#transcript[data-run-status="queued"]').waitFor();
  expect(await page.evaluate(() => getComputedStyle(document.querySelector('#transcript')!, '::after').content)).toContain('Queued');
  await screenshot(page, 'run-queued');
  expect((await hearth.request('POST', `/sessions/${holderSession}/stop`)).body).toEqual({ stopped: true });
  await waitForAnswer(page, 'Answered: Am I next?');
  expect(await page.locator('#transcript[data-run-status]').count()).toBe(0);
  // Its finished run's notification refreshes the panel.
  await panel.locator(`li[data-schedule-id="${waiter}"] .schedule-last[data-status="ok"]`).waitFor();
}

/** The form creates a schedule (the one the submit adds) and shows its next three runs; a bad cron is refused with the server's reason, nothing stored. */
async function formCreatesSchedule(page: Page, hearth: Hearth, browser: BrowserHarness): Promise<void> {
  const panel = page.locator(schedulesSelector);
  const form = panel.locator('form.schedule-form');
  await form.waitFor();
  const listed = async () => (await hearth.request('GET', '/schedules')).body.schedules as { id: string; name: string; every_ms: number }[];
  const before = (await listed()).map((schedule) => schedule.id);
  await form.locator('[name="name"]').fill('Stretch');
  await form.locator('[name="prompt"]').fill('Remind me to stretch');
  await form.locator('[name="kind"]').selectOption('every');
  await form.locator('[name="amount"]').fill('2');
  await form.locator('[name="unit"]').selectOption('h');
  await form.locator('[name="timezone"]').fill('Europe/Berlin');
  await form.locator('button[type="submit"]').click();
  const preview = panel.locator('.schedule-preview');
  await preview.waitFor();
  expect(await preview.locator('li').count()).toBe(3);
  const added = (await listed()).filter((schedule) => !before.includes(schedule.id));
  expect(added.map((schedule) => [schedule.name, schedule.every_ms])).toEqual([['Stretch', 7_200_000]]);
  expect(await panel.locator(`li[data-schedule-id="${added[0]!.id}"] .schedule-when`).textContent()).toBe('every 2 h');

  // A bad cron is refused with the server's reason, and nothing is stored.
  browser.allowErrors(/status of 400/);
  await form.locator('[name="name"]').fill('Broken');
  await form.locator('[name="prompt"]').fill('Never');
  await panel.locator('form.schedule-form [name="kind"]').selectOption('cron');
  await panel.locator('form.schedule-form [name="cron"]').fill('not a cron');
  await panel.locator('form.schedule-form button[type="submit"]').click();
  await panel.locator('.panel-error[role="alert"]', { hasText: 'cron:' }).waitFor();
  expect(await listed()).toHaveLength(before.length + 1);
}

describe.skipIf(skipBrowserTests)('notifications in the page', () => {
  // The full Chromium: the headless shell the other files use has no browser notifications to offer.
  const browser = useBrowser({ executablePath: fullChromiumPath });

  it('notifications, in one page: the bell counts live, opens a session and marks all read; a browser notification once allowed, only in the background; a body as sanitised Markdown in the list and plain text in the browser', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    const sessionId = await hearth.createSession();
    await hearth.request('PATCH', `/sessions/${sessionId}`, { title: 'Nightly backup check' });
    // One unread before the page opens: the count comes from hello.
    await raise(hearth, { title: 'Earlier finding', body: 'Seen before the page opened' });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await waitForEventsSocket(page);

    await bellLiveThenRead(page, hearth, sessionId);
    await browserNotificationOnceAllowed(page, hearth, sessionId);
    await markdownBody(page, hearth);
  });
});

describe.skipIf(skipBrowserTests)('schedules in the page', () => {
  // The run's shared headless shell: these tests raise no browser notification, and its pages cost a fifth less than the full Chromium's.
  const browser = useBrowser();

  it('schedules, in one page: a schedule-sent message is marked; a REST schedule is listed, paused, resumed and deleted; a run shows live, marked scheduled; queued for a run slot and for the model; the form creates one and refuses a bad cron', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth({ env: { LLM_MAX_CONCURRENT: '1', SCHEDULER_MAX_CONCURRENT: '1' } });
    const storedSession = await storedScheduledMessage(hearth);
    const created = await hearth.request('POST', '/schedules', { name: 'Morning <i>brief</i>', prompt: 'Summarise the night', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' });
    expect(created.status).toBe(201);
    const page = await browser.openPage(hearth, { hash: storedSession });
    await waitForApp(page);

    await scheduledMessageMarked(page);
    await restScheduleListed(page, hearth, created.body.schedule.id);
    await scheduledRunLive(page, hearth);
    await queuedForSlotAndModel(page, hearth);
    // Last: it allows the 400 the bad cron causes for the rest of the test.
    await formCreatesSchedule(page, hearth, browser);
  });

  it('makes everyday timings without cron: every day at 9 for a chosen profile, weekdays, a day of the week, once at a time', browserTest, async () => {
    // Tuesday 08:00 in Berlin.
    const hearth = await browser.hearth({ clock: new ManualClock('2026-11-24T07:00:00Z') });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    const panel = await openSchedulesPanel(page);
    const form = panel.locator('form.schedule-form');
    await form.waitFor();
    // Every day at a time is the first choice, at 09:00 until changed; every shipped profile can be picked.
    expect(await form.locator('[name="kind"]').inputValue()).toBe('daily');
    expect(await form.locator('[name="profile_id"] option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value).sort())).toEqual(['secretary', 'server_admin', 'smart_home']);
    expect(await form.locator('[name="profile_id"]').inputValue()).toBe('secretary');
    await form.locator('[name="name"]').fill('Mail');
    await form.locator('[name="prompt"]').fill('Remind me to check mail');
    await form.locator('[name="profile_id"]').selectOption('smart_home');
    await form.locator('[name="timezone"]').fill('Europe/Berlin');
    await form.locator('[name="time"]').fill('09:00');
    await form.locator('section.schedule-next-runs[data-state="shown"] li').nth(2).waitFor();
    expect(await form.locator('section.schedule-next-runs li').evaluateAll((items) => items.map((item) => item.getAttribute('data-at')))).toEqual([
      '2026-11-24T09:00:00+01:00',
      '2026-11-25T09:00:00+01:00',
      '2026-11-26T09:00:00+01:00',
    ]);
    await form.locator('button[type="submit"]').click();
    await panel.locator('.schedule-preview li').nth(2).waitFor();
    const [daily] = (await hearth.request('GET', '/schedules')).body.schedules;
    expect(daily).toMatchObject({ name: 'Mail', cron: '0 9 * * *', profile_id: 'smart_home', timezone: 'Europe/Berlin' });
    expect(await panel.locator(`li[data-schedule-id="${daily.id}"] .schedule-when`).textContent()).toBe('every day at 09:00 (0 9 * * *) · Europe/Berlin');
    await screenshot(page, 'schedule-form-daily');

    const create = async (name: string, choose: () => Promise<void>) => {
      await form.locator('[name="name"]').fill(name);
      await form.locator('[name="prompt"]').fill(name);
      await form.locator('[name="timezone"]').fill('Europe/Berlin');
      await choose();
      await form.locator('button[type="submit"]').click();
      // The page has its answer and a fresh form once it shows what it created; the next one is typed only then.
      await panel.locator('.schedule-preview h3', { hasText: `Created ${name}:` }).waitFor();
      return (await hearth.request('GET', '/schedules')).body.schedules.find((schedule: { name: string }) => schedule.name === name);
    };
    expect(await create('Standup', async () => {
      await form.locator('[name="kind"]').selectOption('weekdays');
      await form.locator('[name="time"]').fill('09:30');
    })).toMatchObject({ cron: '30 9 * * 1-5' });
    expect(await create('Bins', async () => {
      await form.locator('[name="kind"]').selectOption('weekly');
      await form.locator('[name="day"]').selectOption('0');
      await form.locator('[name="time"]').fill('19:00');
    })).toMatchObject({ cron: '0 19 * * 0' });
    const once = await create('Dentist', async () => {
      await form.locator('[name="kind"]').selectOption('at');
      await form.locator('[name="at"]').fill('2026-12-01T15:30');
    });
    // The browser's own time, sent with its offset.
    const browserOffset = await page.evaluate(() => new Date('2026-12-01T15:30').getTimezoneOffset());
    expect(Date.parse(once.at)).toBe(Date.parse('2026-12-01T15:30:00Z') + browserOffset * 60_000);
  });

  it('previews the next three runs while the person types, in the schedule\'s zone, across the DST change', browserTest, async () => {
    // Saturday 08:00 in Berlin; the clocks go forward that night.
    const hearth = await browser.hearth({ clock: new ManualClock('2026-03-28T07:00:00Z') });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    const panel = await openSchedulesPanel(page);
    const form = panel.locator('form.schedule-form');
    const nextRuns = form.locator('section.schedule-next-runs');
    await form.waitFor();
    // The form's defaults (every day at 09:00, the browser's zone) are previewed before any typing (issue 35).
    await nextRuns.locator('li').nth(2).waitFor();
    expect(await nextRuns.getAttribute('data-state')).toBe('shown');
    // Half-typed patterns are refused on the way; only the last answer counts.
    browser.allowErrors(/status of 400/);
    const shownRuns = (state: string) => page.waitForFunction(
      ([selector, expected]) => {
        const section = document.querySelector(selector);
        return section?.getAttribute('data-state') === 'shown' && JSON.stringify([...section.querySelectorAll('li')].map((item) => item.getAttribute('data-at'))) === expected;
      },
      [`${schedulesSelector} form.schedule-form section.schedule-next-runs`, state] as const,
    );

    await form.locator('[name="timezone"]').fill('Europe/Berlin');
    await form.locator('[name="kind"]').selectOption('cron');
    await form.locator('[name="cron"]').pressSequentially('0 9 * * *');
    await shownRuns(JSON.stringify(['2026-03-28T09:00:00+01:00', '2026-03-29T09:00:00+02:00', '2026-03-30T09:00:00+02:00']));
    const berlin = await nextRuns.locator('li').allTextContents();
    expect(berlin).toHaveLength(3);
    for (const text of berlin) expect(text).toMatch(/09:00.* Europe\/Berlin$/);
    await screenshot(page, 'schedule-preview');

    // Another zone: the same 09:00, read there.
    await form.locator('[name="timezone"]').fill('Asia/Tokyo');
    await shownRuns(JSON.stringify(['2026-03-29T09:00:00+09:00', '2026-03-30T09:00:00+09:00', '2026-03-31T09:00:00+09:00']));
    for (const text of await nextRuns.locator('li').allTextContents()) expect(text).toMatch(/09:00.* Asia\/Tokyo$/);

    // A bad pattern or zone: the server's reason, naming the field.
    await form.locator('[name="cron"]').fill('61 * * * *');
    await form.locator('section.schedule-next-runs[data-state="refused"]', { hasText: 'cron:' }).waitFor();
    await form.locator('[name="cron"]').fill('0 9 * * *');
    await form.locator('[name="timezone"]').fill('Mars/Olympus');
    await form.locator('section.schedule-next-runs[data-state="refused"]', { hasText: 'timezone:' }).waitFor();

    // Another kind starts empty; an interval keeps whole hours of real time.
    await form.locator('[name="timezone"]').fill('Europe/Berlin');
    await form.locator('[name="kind"]').selectOption('every');
    await form.locator('section.schedule-next-runs[data-state="empty"]').waitFor();
    await form.locator('[name="unit"]').selectOption('h');
    await form.locator('[name="amount"]').pressSequentially('12');
    await shownRuns(JSON.stringify(['2026-03-28T20:00:00+01:00', '2026-03-29T09:00:00+02:00', '2026-03-29T21:00:00+02:00']));
    await form.locator('[name="amount"]').fill('0');
    await form.locator('section.schedule-next-runs[data-state="refused"]', { hasText: 'every:' }).waitFor();

    expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
  });
});
