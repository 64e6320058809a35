// The ways a model got around the shipped profiles' approval rules (issue 24, docs/security.md, Approvals),
// each tried through the real server with a scripted model: every one is now asked or
// refused, and nothing reaches the disk or the stand-in HTTP server unasked.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HearthEvent } from '../../src/events/hearth-events.ts';
import type { RunFinished } from '../../src/scheduler/scheduler.ts';
import { EventSocket } from '../support/event-socket.ts';
import { type Hearth, useHearth } from '../support/hearth-server.ts';
import { closeServers, serve } from '../support/loopback-http.ts';
import { ManualClock } from '../support/manual-clock.ts';

const sockets: EventSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  closeServers();
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const start = useHearth();

/** A stand-in for Home Assistant or any HTTP service: it records what reaches it. */
async function standIn(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const url = await serve((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  });
  return { url, seen };
}

const write = (file: string) => ({ name: 'filesystem', arguments: { action: 'write', path: file, content: 'written' } });
const post = (url: string) => ({ name: 'http_request', arguments: { method: 'POST', url, body: { entity_id: 'lock.front_door' } } });

function workFile(server: Hearth, sessionId: string, file: string): string {
  return path.join(server.config.SESSION_FILES_DIR, sessionId, file);
}

async function openEvents(server: Hearth) {
  const socket = await EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
  sockets.push(socket);
  const next = <Type extends HearthEvent['type']>(type: Type) =>
    socket.nextMatching((event) => (event as { type: string }).type === type, type) as unknown as Promise<Extract<HearthEvent, { type: Type }>>;
  await next('hello');
  return { next };
}

describe('a model cannot move its work under a laxer profile', () => {
  it('schedule: another profile is asked about (the subject names it) and, denied, nothing is stored; the current profile is not asked', async () => {
    const hearth = await start({ clock: new ManualClock('2026-11-23T15:00:00Z') });
    hearth.llm.script(
      { toolCalls: [{ name: 'schedule', arguments: { action: 'create', name: 'Probe', every: '1m', profile: 'smart_home', prompt: 'Write a file and unlock the door.' } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'create', name: 'Same', every: '1h', profile: 'server_admin', prompt: 'Check the disks.' } }] },
      { content: 'Done.' },
    );
    const sessionId = await hearth.createSession('server_admin');
    const socket = await hearth.connect(sessionId);
    sockets.push(socket);
    socket.send({ type: 'message', content: 'Set up the probe' });
    const asked = await socket.next('approval_required');
    expect(asked).toMatchObject({ tool: 'schedule', subject: 'create Probe (profile smart_home)' });
    expect(asked.reason).toMatch(/under the smart_home profile's approval rules instead of this conversation's server_admin/);
    expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'deny' });
    await socket.next('stream_end');

    expect(socket.ofType('approval_required')).toHaveLength(1);
    expect(socket.ofType('tool_call').map((call) => call.success)).toEqual([false, true]);
    expect((await hearth.request('GET', '/schedules')).body.schedules.map((schedule: any) => [schedule.name, schedule.profile_id])).toEqual([['Same', 'server_admin']]);
    const audit = (await hearth.request('GET', `/approvals?session_id=${sessionId}`)).body.approvals;
    expect(audit.map((row: any) => [row.subject, row.decision, row.by])).toEqual([
      ['create Same (profile server_admin)', 'allow', 'rule'],
      ['create Probe (profile smart_home)', 'deny', 'user'],
    ]);
  });

  it('a scheduled run obeys its profile: its write and POST wait for a person, who is notified, and nothing runs until decided', async () => {
    const service = await standIn();
    const clock = new ManualClock('2026-11-23T15:00:00Z');
    const hearth = await start({ clock });
    const events = await openEvents(hearth);
    hearth.llm.script(
      { toolCalls: [{ name: 'schedule', arguments: { action: 'create', name: 'Probe', every: '1m', prompt: 'Write a file and post.' } }] },
      { content: 'Scheduled.' },
    );
    const chat = await hearth.createSession('server_admin');
    await hearth.request('POST', `/sessions/${chat}/messages`, { content: 'Schedule the probe' });
    const [schedule] = (await hearth.request('GET', '/schedules')).body.schedules;
    expect(schedule).toMatchObject({ name: 'Probe', profile_id: 'server_admin' });

    hearth.llm.script({ toolCalls: [write('probe.txt'), post(`${service.url}/hook`)] }, { content: 'Finished.' });
    const finished = once(hearth.app.scheduler, 'run_finished').then(([event]) => event as RunFinished);
    clock.advanceTo('2026-11-23T15:01:00Z');

    const first = await events.next('notification');
    expect(first.title).toMatch(/^filesystem waits for your decision/);
    const [waitingWrite] = hearth.deps.approvals.pending();
    expect(waitingWrite).toMatchObject({ tool: 'filesystem', subject: expect.stringMatching(/^write .*probe\.txt$/) });
    const runSession = waitingWrite!.session_id;
    expect(runSession).not.toBe(chat);
    expect(existsSync(workFile(hearth, runSession, 'probe.txt'))).toBe(false);
    expect((await hearth.request('POST', `/sessions/${runSession}/approvals/${waitingWrite!.call_id}`, { decision: 'allow' })).status).toBe(200);

    const second = await events.next('notification');
    expect(second).toMatchObject({ title: expect.stringMatching(/^http_request waits/), body: `POST ${service.url}/hook` });
    expect(existsSync(workFile(hearth, runSession, 'probe.txt'))).toBe(true);
    expect(service.seen).toEqual([]);
    const [waitingPost] = hearth.deps.approvals.pending();
    expect((await hearth.request('POST', `/sessions/${runSession}/approvals/${waitingPost!.call_id}`, { decision: 'deny' })).status).toBe(200);
    expect(await finished).toMatchObject({ scheduleId: schedule.id, status: 'ok', sessionId: runSession });
    expect(service.seen).toEqual([]);
  });

  it('switch_profile by the model is asked (deny rules aside, whatever the rules say); denied, the next turn keeps the old rules', async () => {
    const service = await standIn();
    const hearth = await start();
    hearth.llm.script(
      { toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'smart_home' } }] },
      { content: 'Staying.' },
      { toolCalls: [write('after.txt'), post(`${service.url}/hook`)] },
      { content: 'Left alone.' },
    );
    const sessionId = await hearth.createSession('server_admin');
    const socket = await hearth.connect(sessionId);
    sockets.push(socket);
    socket.send({ type: 'message', content: 'Switch to the smart home' });
    const switching = await socket.next('approval_required');
    expect(switching).toMatchObject({ tool: 'switch_profile', subject: 'server_admin -> smart_home' });
    expect(switching.reason).toMatch(/from Server Administrator to Smart Home Assistant/);
    socket.send({ type: 'approve', call_id: switching.call_id, decision: 'deny' });
    await socket.next('stream_end');
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('server_admin');

    socket.send({ type: 'message', content: 'Now write and post' });
    for (const tool of ['filesystem', 'http_request']) {
      const asked = await socket.next('approval_required');
      expect(asked.tool).toBe(tool);
      socket.send({ type: 'approve', call_id: asked.call_id, decision: 'deny' });
    }
    await socket.next('stream_end');
    expect(existsSync(workFile(hearth, sessionId, 'after.txt'))).toBe(false);
    expect(service.seen).toEqual([]);
  });

  it("the person's own switch is not asked, and a deny rule on switch_profile refuses the model's without asking", async () => {
    const denying = `---\nid: fenced\nname: Fenced\ntools: [switch_profile]\napprovals:\n  allow: [switch_profile]\n  deny: ["switch_profile(* -> smart_home)"]\n---\nYou stay.\n`;
    const hearth = await start({ profiles: { fenced: denying } });
    const sessionId = await hearth.createSession('server_admin');
    expect((await hearth.request('PATCH', `/sessions/${sessionId}`, { profile_id: 'fenced' })).status).toBe(200);
    expect((await hearth.request('GET', '/approvals?status=all')).body.approvals).toEqual([]);

    hearth.llm.script(
      { toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'smart_home' } }] },
      { toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'secretary' } }] },
      { content: 'ok' },
    );
    const socket = await hearth.connect(sessionId);
    sockets.push(socket);
    socket.send({ type: 'message', content: 'Switch' });
    // The allow rule does not spare the second switch the question.
    const asked = await socket.next('approval_required');
    expect(asked).toMatchObject({ subject: 'fenced -> secretary' });
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'deny' });
    await socket.next('stream_end');
    expect(socket.ofType('tool_call')[0]!.result).toMatch(/Refused by the rule switch_profile\(\* -> smart_home\)/);
    expect(socket.ofType('approval_required')).toHaveLength(1);
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('fenced');
  });
});

describe("smart_home's lock rules hold for every spelling of HA's service URL", () => {
  it('dot segments, backslashes, a tab, escapes, upper case and the generic homeassistant services are all asked; the stand-in sees none of them', async () => {
    const service = await standIn();
    const hearth = await start();
    const base = service.url.replace('127.0.0.1', 'LOCALHOST.');
    const spellings = [
      `${base}/api/services/./lock/unlock`,
      `${base}/api\\services\\lock\\unlock`,
      `${base}/api/services/lo\tck/unlock`,
      `${base}/api/services/%6c%6fck/unlock`,
      `${base}/api/x/%2e%2e/services/LOCK/Unlock`,
      `${base}/api/services%2Fcover%2Fopen_cover`,
      `${base}/api/services/homeassistant/turn_on`,
    ];
    hearth.llm.script({ toolCalls: [...spellings.map(post), post(`${service.url}/api/services/light/turn_on`)] }, { content: 'Done.' });
    const sessionId = await hearth.createSession('smart_home');
    const socket = await hearth.connect(sessionId);
    sockets.push(socket);
    socket.send({ type: 'message', content: 'Unlock the door' });
    const subjects: string[] = [];
    for (const _spelling of spellings) {
      const asked = await socket.next('approval_required');
      subjects.push(asked.subject);
      expect(service.seen).toEqual([]);
      socket.send({ type: 'approve', call_id: asked.call_id, decision: 'deny' });
    }
    await socket.next('stream_end');

    const host = `http://localhost:${new URL(service.url).port}`;
    expect(subjects).toEqual([
      ...Array(5).fill(`POST ${host}/api/services/lock/unlock`),
      `POST ${host}/api/services/cover/open_cover`,
      `POST ${host}/api/services/homeassistant/turn_on`,
    ]);
    // The one call no rule asks about ran at once: the stand-in was reachable all along.
    expect(service.seen).toEqual(['POST /api/services/light/turn_on']);
    expect(socket.ofType('tool_call').map((call) => call.success)).toEqual([...spellings.map(() => false), true]);
  });
});
