import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { HearthEvent } from '../src/events/hearth-events.ts';
import { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';

const startApp = useHearth();


function eventsSocket(server: Hearth): Promise<EventSocket> {
  return EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
}

/** The next events-socket frame of a type (the socket's own typing is the session union). */
function nextHearthEvent<Type extends HearthEvent['type']>(socket: EventSocket, type: Type): Promise<Extract<HearthEvent, { type: Type }>> {
  return socket.nextMatching((event) => (event as { type: string }).type === type, type) as unknown as Promise<Extract<HearthEvent, { type: Type }>>;
}

const listedIds = async (server: Hearth) => (await server.request('GET', '/sessions')).body.map((session: any) => session.session_id);

describe('empty sessions', () => {
  it('are not listed nor announced until their first message, and stay usable', async () => {
    const hearth = await startApp();
    const events = await eventsSocket(hearth);
    await nextHearthEvent(events, 'hello');
    const talked = await hearth.createSession();
    await hearth.request('POST', `/sessions/${talked}/messages`, { content: 'Hello' });
    expect((await nextHearthEvent(events, 'sessions_changed')).session_id).toBe(talked);

    const empty = await hearth.createSession();
    expect(await listedIds(hearth)).toEqual([talked]);
    expect((await hearth.request('GET', `/sessions/${empty}`)).body).toMatchObject({ session_id: empty, messages: [] });

    const socket = await hearth.connect(empty);
    socket.send({ type: 'message', content: 'Now I speak' });
    // The first event about the empty session is the one its first message brings.
    const announced = await events.nextMatching((event: any) => event.type === 'sessions_changed' && event.session_id !== talked);
    expect(announced).toEqual({ type: 'sessions_changed', session_id: empty, change: 'created' });
    await socket.next('stream_end');
    expect(await listedIds(hearth)).toEqual([empty, talked]);
    socket.close();
    events.close();
  });

  it('are removed at start once older than a day, with their files; younger ones and ones with messages stay', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-empty-sessions-'));
    const llm = await startScriptedOllama();
    onTestFinished(async () => {
      await llm.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    let hearth = await startApp({ dataDir, llm });
    const stale = await hearth.createSession();
    const fresh = await hearth.createSession();
    const oldButUsed = await hearth.createSession();
    await hearth.request('POST', `/sessions/${oldButUsed}/messages`, { content: 'Keep me' });
    const upload = new FormData();
    upload.append('file', new Blob(['notes']), 'notes.txt');
    expect((await fetch(`${hearth.baseUrl}/sessions/${stale}/files`, { method: 'POST', body: upload })).status).toBe(200);
    const staleFolder = path.join(hearth.config.SESSION_FILES_DIR, stale);
    expect(existsSync(staleFolder)).toBe(true);
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000).toISOString();
    await hearth.deps.db.updateTable('sessions').set({ created_at: twoDaysAgo }).where('id', 'in', [stale, oldButUsed]).execute();
    await hearth.close();

    hearth = await startApp({ dataDir, llm });
    expect((await hearth.request('GET', `/sessions/${stale}`)).status).toBe(404);
    expect(existsSync(staleFolder)).toBe(false);
    expect((await hearth.request('GET', `/sessions/${fresh}`)).status).toBe(200);
    expect(await listedIds(hearth)).toEqual([oldButUsed]);
  });
});

describe('profile switches', () => {
  it('PATCH leaves a display-only marker that survives a reload, and every socket of the session hears profile_switched', async () => {
    const hearth = await startApp();
    const sessionId = await hearth.createSession('secretary');
    await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' });
    const socket = await hearth.connect(sessionId);
    await socket.next('session_sync');

    expect((await hearth.request('PATCH', `/sessions/${sessionId}`, { profile_id: 'server_admin' })).body.profile_id).toBe('server_admin');
    expect(await socket.next('profile_switched')).toEqual({ type: 'profile_switched', profile_id: 'server_admin', profile_name: 'Server Administrator' });
    // The same profile again is no switch: no second marker.
    await hearth.request('PATCH', `/sessions/${sessionId}`, { profile_id: 'server_admin' });

    const shown = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
    expect(shown.at(-1)).toMatchObject({
      role: 'system',
      content: 'Switched to the Server Administrator profile.',
      profile_switch: { profile_id: 'server_admin', profile_name: 'Server Administrator', by: 'user' },
    });
    expect(shown.filter((message: any) => message.profile_switch)).toHaveLength(1);
    const context = (await hearth.request('GET', `/sessions/${sessionId}/context`)).body.messages;
    expect(context.map((message: any) => message.role)).toEqual(['user', 'assistant']);

    await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Next' });
    const sent = hearth.llm.requests.at(-1)!.body.messages.map((message: any) => message.content);
    expect(sent.join('\n')).not.toContain('Switched to the');
    socket.close();
  });

  it('an empty session switches without a marker and stays unlisted', async () => {
    const hearth = await startApp();
    const sessionId = await hearth.createSession('secretary');
    await hearth.request('PATCH', `/sessions/${sessionId}`, { profile_id: 'smart_home' });
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body).toMatchObject({ profile_id: 'smart_home', messages: [] });
    expect(await listedIds(hearth)).toEqual([]);
  });

  it('the switch_profile tool leaves a marker by the agent', async () => {
    const hearth = await startApp();
    hearth.llm.script({ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'smart_home' } }] }, { content: 'Switched.' });
    const sessionId = await hearth.createSession('secretary');
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Turn on the lights' });
    socket.send({ type: 'approve', call_id: (await socket.next('approval_required')).call_id, decision: 'allow' });
    await socket.next('stream_end');
    socket.close();
    const shown = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
    expect(shown.filter((message: any) => message.profile_switch).map((message: any) => message.profile_switch)).toEqual([
      { profile_id: 'smart_home', profile_name: expect.any(String), by: 'agent' },
    ]);
    const context = (await hearth.request('GET', `/sessions/${sessionId}/context`)).body.messages;
    expect(context.some((message: any) => message.role === 'system')).toBe(false);
  });

  it('a profile file added or edited reaches open pages as profiles_changed', async () => {
    const hearth = await startApp();
    const events = await eventsSocket(hearth);
    await nextHearthEvent(events, 'hello');
    await mkdir(hearth.config.PROFILES_DIR, { recursive: true });
    const file = path.join(hearth.config.PROFILES_DIR, 'gardener.md');
    const profile = (name: string) => `---\nid: gardener\nname: ${name}\ndescription: Looks after plants.\ntools: []\n---\nYou garden.\n`;
    await writeFile(file, profile('Gardener'));
    expect((await nextHearthEvent(events, 'profiles_changed')).profiles).toContainEqual({ id: 'gardener', name: 'Gardener' });
    await writeFile(file, profile('Head Gardener'));
    expect((await nextHearthEvent(events, 'profiles_changed')).profiles).toContainEqual({ id: 'gardener', name: 'Head Gardener' });
    events.close();
  });
});
