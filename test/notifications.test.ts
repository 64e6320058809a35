import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { HearthEvent } from '../src/events/hearth-events.ts';
import { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { createTestTools } from './support/test-tools.ts';
import { waitUntil } from './support/wait-until.ts';

const startApp = useHearth();
const sockets: EventSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
});

const askingProfile = `---\nid: asking\nname: Asking\ntools: [add_numbers]\napprovals:\n  ask: [add_numbers]\n---\nYou add numbers.\n`;

async function start(options: { dataDir?: string } = {}): Promise<Hearth> {
  return startApp({ tools: createTestTools(), profiles: { asking: askingProfile }, ...options });
}

/** The events socket of one open page, with a way to wait for the next frame of a kind. */
async function openPage(server: Hearth) {
  const socket = await EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
  sockets.push(socket);
  const next = <Type extends HearthEvent['type']>(type: Type) =>
    socket.nextMatching((event) => (event as { type: string }).type === type, type) as unknown as Promise<Extract<HearthEvent, { type: Type }>>;
  return { socket, next };
}

describe('notifications', () => {
  it('a raised notification reaches open pages and the list, newest first, and is marked read one by one or all at once', async () => {
    const server = await start();
    const page = await openPage(server);
    expect((await page.next('hello')).unread_notifications).toBe(0);
    const sessionId = await server.createSession();

    const first = await server.deps.notifications.raise({ title: 'Backups checked', body: 'All three ran.' });
    expect(await page.next('notification')).toEqual({ type: 'notification', id: first.id, title: 'Backups checked', body: 'All three ran.', created_at: first.created_at });
    const second = await server.deps.notifications.raise({ title: 'Disk nearly full', body: '/var is at 93%.', sessionId });
    expect(await page.next('notification')).toEqual({
      type: 'notification',
      id: second.id,
      title: 'Disk nearly full',
      body: '/var is at 93%.',
      session_id: sessionId,
      created_at: second.created_at,
    });

    const unread = await server.request('GET', '/notifications?unread=1');
    expect(unread.status).toBe(200);
    expect(unread.body.unread_count).toBe(2);
    expect(unread.body.notifications.map((notification: { id: number }) => notification.id)).toEqual([second.id, first.id]);
    expect(unread.body.notifications[0]).toMatchObject({ title: 'Disk nearly full', session_id: sessionId, read_at: null });
    expect((await server.request('GET', '/notifications?limit=1')).body.notifications.map((notification: { id: number }) => notification.id)).toEqual([second.id]);

    expect(await server.request('POST', `/notifications/${first.id}/read`)).toEqual({ status: 200, body: { id: first.id, read: true } });
    expect((await server.request('GET', '/notifications?unread=1')).body.notifications.map((notification: { id: number }) => notification.id)).toEqual([second.id]);
    const all = (await server.request('GET', '/notifications')).body.notifications;
    expect(all).toHaveLength(2);
    expect(all[1].read_at).toEqual(expect.any(String));
    expect((await (await openPage(server)).next('hello')).unread_notifications).toBe(1);

    expect(await server.request('POST', '/notifications/read-all')).toEqual({ status: 200, body: { read: 1 } });
    expect((await server.request('GET', '/notifications?unread=1')).body).toEqual({ notifications: [], unread_count: 0 });
    expect((await (await openPage(server)).next('hello')).unread_notifications).toBe(0);
  });

  it('refuses reading a notification that does not exist, and bad list queries', async () => {
    const server = await start();
    expect(await server.request('POST', '/notifications/999/read')).toMatchObject({ status: 404, body: { error: { code: 'notification_not_found' } } });
    expect((await server.request('POST', '/notifications/abc/read')).status).toBe(400);
    expect((await server.request('GET', '/notifications?unread=yes')).status).toBe(400);
    expect((await server.request('GET', '/notifications?limit=0')).status).toBe(400);
    expect((await server.request('GET', '/notifications?limit=1001')).status).toBe(400);
  });

  it('unread notifications survive a restart and are counted in hello', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-notifications-restart-'));
    // Removed after the afterEach hooks, so after the app is closed.
    onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
    const before = await start({ dataDir });
    const kept = await before.deps.notifications.raise({ title: 'Still unread', body: 'after the restart' });
    const read = await before.deps.notifications.raise({ title: 'Read before', body: 'gone from unread' });
    await before.request('POST', `/notifications/${read.id}/read`);
    await before.close();

    const after = await start({ dataDir });
    expect((await after.request('GET', '/notifications?unread=1')).body.notifications).toEqual([
      { id: kept.id, title: 'Still unread', body: 'after the restart', created_at: kept.created_at, read_at: null },
    ]);
    expect((await (await openPage(after)).next('hello')).unread_notifications).toBe(1);
  });

  it('an approval waiting in a run nobody watches raises a notification naming the tool and the session; a watched one does not', async () => {
    const server = await start();
    const page = await openPage(server);
    await page.next('hello');

    server.llm.script({ toolCalls: [{ name: 'add_numbers', arguments: { a: 1, b: 2 } }] }, { content: 'It is 3.' });
    const watchedId = await server.createSession('asking');
    const watcher = await server.connect(watchedId);
    watcher.send({ type: 'message', content: 'Add one and two' });
    const watchedCall = await watcher.next('approval_required');
    watcher.send({ type: 'approve', call_id: watchedCall.call_id, decision: 'allow' });
    await watcher.next('stream_end');
    watcher.close();

    server.llm.script({ toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 2 } }] }, { content: 'It is 4.' });
    const unwatchedId = await server.createSession('asking');
    const answered = server.request('POST', `/sessions/${unwatchedId}/messages`, { content: 'Add two and two', wait: 'end' });
    const notification = await page.next('notification');
    expect(notification).toMatchObject({ title: 'add_numbers waits for your decision in Add two and two', body: 'add_numbers', session_id: unwatchedId });

    const [waiting] = server.deps.approvals.pending();
    expect(waiting).toMatchObject({ session_id: unwatchedId, tool: 'add_numbers' });
    expect((await server.request('POST', `/sessions/${unwatchedId}/approvals/${waiting!.call_id}`, { decision: 'allow' })).status).toBe(200);
    expect((await answered).body.content).toBe('It is 4.');
    const listed = (await server.request('GET', '/notifications')).body.notifications;
    expect(listed.map((item: { session_id?: string }) => item.session_id)).toEqual([unwatchedId]);
  });

  it('an approval still waiting when the last tab on its session closes raises a notification, once', async () => {
    const server = await start();
    const page = await openPage(server);
    await page.next('hello');
    server.llm.script({ toolCalls: [{ name: 'add_numbers', arguments: { a: 3, b: 4 } }] }, { content: 'It is 7.' });
    const sessionId = await server.createSession('asking');
    const first = await server.connect(sessionId);
    const second = await server.connect(sessionId);
    first.send({ type: 'message', content: 'Add three and four' });
    const call = await first.next('approval_required');
    first.close();
    await first.closed();
    // One tab is still open: nothing is raised yet.
    const raised: unknown[] = [];
    const unsubscribe = server.deps.events.subscribe((event) => {
      if (event.type === 'notification') raised.push(event);
    });
    second.close();
    const notification = await page.next('notification');
    unsubscribe();
    expect(raised).toHaveLength(1);
    expect(notification).toMatchObject({ title: 'add_numbers waits for your decision in Add three and four', body: 'add_numbers', session_id: sessionId });

    // A tab opened and closed again does not raise a second one for the same call.
    const third = await server.connect(sessionId);
    await third.next('approval_required');
    third.close();
    await third.closed();
    expect((await server.request('POST', `/sessions/${sessionId}/approvals/${call.call_id}`, { decision: 'allow' })).status).toBe(200);
    await waitUntil(async () => !server.app.agent.isRunning(sessionId));
    expect((await server.request('GET', '/notifications')).body.notifications.map((item: { session_id?: string }) => item.session_id)).toEqual([sessionId]);
  });
});
