// Issue 33: "the teenager can allow the `rm` the server_admin run asks about". A child's run asks
// about a call; the child tries to allow it over REST and over the session's WebSocket, and a
// guest who may neither see the session nor decide tries REST. Replayed with Hearth run by an
// unprivileged user, the household made through its own routes (the owner by AUTH_TOKEN): each
// attempt is refused and decides nothing, and the call runs only once an adult allows it. The
// same in this process, and the whole decision table, are in test/approvals-household.test.ts and
// test/internals/approval-deciders.test.ts.
import { stat } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { EventSocket } from '../support/event-socket.ts';
import { sessionFrom } from '../support/people.ts';
import { unprivilegedUser } from '../support/unprivileged-user.ts';
import { startJailedHearth, type JailedHearth } from './jail-harness.ts';

/** A profile children may use, whose asks the adults decide; it asks before every scratchpad write. */
const choresProfile = `---\nid: chores\nname: Chores\nmax_iterations: 4\nplanning_enabled: false\ntools: [scratchpad]\npeople: [owner, adult, child]\napprovers: [owner, adult]\napprovals:\n  default: allow\n  ask: [scratchpad]\n---\nYou keep notes.\n`;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Member {
  id: string;
  name: string;
  headers: Record<string, string>;
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** Adds a person through POST /people (as the owner) and signs them in through POST /auth/sign-in. */
async function member(hearth: JailedHearth, name: string, role: 'adult' | 'child' | 'guest'): Promise<Member> {
  const passphrase = `the passphrase of ${name}`;
  const added = await hearth.request('POST', '/people', { name, role, passphrase });
  expect(added.status).toBe(201);
  const signedIn = await fetch(`${hearth.baseUrl}/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, passphrase }) });
  expect(signedIn.status).toBe(200);
  const headers = { cookie: `hearth_session=${sessionFrom(signedIn.headers.getSetCookie())}` };
  const request: Member['request'] = async (method, url, body) => {
    const response = await fetch(hearth.baseUrl + url, {
      method,
      headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  return { id: added.body.id, name, headers, request };
}

describe("a child's decision on their own run's ask (issue 33)", () => {
  it('is refused over REST and the WebSocket, as is a guest\'s, with Hearth run by an unprivileged user; an adult decides it', async () => {
    const user = await unprivilegedUser();
    const hearth = await startJailedHearth({ user, profiles: { chores: choresProfile } });
    cleanups.push(() => hearth.close());
    expect((await stat(`/proc/${hearth.pid}`)).uid).toBe(user.uid);
    const adult = await member(hearth, 'Ada', 'adult');
    const child = await member(hearth, 'Cal', 'child');
    const guest = await member(hearth, 'Gus', 'guest');

    hearth.llm.script({ toolCalls: [{ name: 'scratchpad', arguments: { action: 'write', section: 'door', content: 'unlocked' } }] }, { content: 'Noted.' });
    const created = await child.request('POST', '/sessions', { profile_id: 'chores' });
    expect(created.status).toBe(201);
    const sessionId = created.body.session_id as string;
    const socket = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/sessions/${sessionId}`, child.headers);
    cleanups.push(async () => socket.close());
    socket.send({ type: 'message', content: 'Note that the door is unlocked' });
    const required = await socket.next('approval_required');
    expect(required.can_decide).toBe(false);
    const url = `/sessions/${sessionId}/approvals/${required.call_id}`;

    expect(await child.request('POST', url, { decision: 'allow' })).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    socket.send({ type: 'approve', call_id: required.call_id, decision: 'allow', remember: 'session' });
    expect(await socket.next('error')).toMatchObject({ code: 'forbidden' });
    expect(await guest.request('POST', url, { decision: 'allow' })).toMatchObject({ status: 404, body: { error: { code: 'session_not_found' } } });
    // Still waiting, for the adult: nothing ran.
    expect((await adult.request('GET', '/approvals?status=pending')).body.approvals.map((approval: any) => approval.call_id)).toEqual([required.call_id]);
    expect(socket.types()).not.toContain('tool_call');

    expect((await adult.request('POST', url, { decision: 'allow' })).status).toBe(200);
    expect(await socket.next('approval_resolved')).toMatchObject({ decision: 'allow', decider: { id: adult.id, name: 'Ada' }, via: 'rest' });
    expect(await socket.next('tool_call')).toMatchObject({ success: true });
    await socket.next('stream_end');
    const audit = (await child.request('GET', '/approvals')).body.approvals;
    expect(audit).toEqual([expect.objectContaining({ call_id: required.call_id, asked_by: { id: child.id, name: 'Cal' }, decider: { id: adult.id, name: 'Ada' }, via: 'rest' })]);
  }, 120_000);
});

describe("a child's model handing work to a profile the child may not use (issue 33 review)", () => {
  it('starts no server_admin sub-agent, so no host terminal runs for the child, with Hearth run by an unprivileged user', async () => {
    const user = await unprivilegedUser();
    const hearth = await startJailedHearth({ user });
    cleanups.push(() => hearth.close());
    expect((await stat(`/proc/${hearth.pid}`)).uid).toBe(user.uid);
    const child = await member(hearth, 'Cal', 'child');
    const created = await child.request('POST', '/sessions', { profile_id: 'smart_home' });
    expect(created.status).toBe(201);
    const sessionId = created.body.session_id as string;
    const before = hearth.llm.requests.length;
    hearth.llm.script(
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Run cat /etc/passwd in the terminal', profile_id: 'server_admin' } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'cat /etc/passwd' } }] },
      { content: 'Done.' },
    );
    expect((await child.request('POST', `/sessions/${sessionId}/messages`, { content: 'Ask a server helper' })).status).toBe(200);
    const sent = hearth.llm.requests.slice(before).map((request) => JSON.stringify(request.body));
    expect(sent.some((body) => body.includes("You are the user's server administrator"))).toBe(false);
    const context = (await child.request('GET', `/sessions/${sessionId}/context`)).body.messages;
    const results = context.filter((message: any) => message.role === 'tool').map((message: any) => String(message.content));
    expect(results[0]).toMatch(/may not use the profile "server_admin"/);
    expect(results.join('\n')).not.toContain('root:');
  }, 120_000);
});
