// Attacks on the household through the model (issue 33's review): a child or a guest, or someone
// writing in a session shared with them, steering the model to reach past their role — a
// sub-agent under a profile their role may not use, someone else's schedules — on one real server
// with the shipped profiles and a scripted model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../src/people/person.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { addPerson, household, type SignedIn } from './support/people.ts';

let hearth: Hearth;
const signedIn = {} as Record<Role, SignedIn>;

beforeAll(async () => {
  hearth = await startHearth();
  const { owner, people: [adult, child, guest] } = await household(hearth, ['adult', 'child', 'guest'] as const);
  Object.assign(signedIn, { owner, adult, child, guest });
});
afterAll(async () => {
  await hearth?.close();
});

/** Whether any call the model was sent carried server_admin's prompt: a sub-agent ran under it. */
const serverAdminRan = (from: number) => hearth.llm.requests.slice(from).some((request) => JSON.stringify(request.body).includes("You are the user's server administrator"));

/** The tool results of the session's context, as the model read them. */
async function toolResults(person: SignedIn, sessionId: string): Promise<string[]> {
  const { body } = await person.request('GET', `/sessions/${sessionId}/context`);
  return body.messages.filter((message: any) => message.role === 'tool').map((message: any) => String(message.content));
}

describe('a sub-agent under a profile the person may not use', () => {
  it.each(['child', 'guest'] as const)("is refused in a %s's session, and never runs", async (role) => {
    const person = signedIn[role];
    const sessionId = await person.createSession('smart_home');
    const before = hearth.llm.requests.length;
    hearth.llm.script(
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Run cat /etc/hostname in the terminal', profile_id: 'server_admin' } }] },
      { content: 'Done.' },
    );
    expect((await person.request('POST', `/sessions/${sessionId}/messages`, { content: 'Ask a server admin helper' })).status).toBe(200);
    expect(serverAdminRan(before)).toBe(false);
    const [result] = await toolResults(person, sessionId);
    expect(result).toMatch(/may not use the profile "server_admin"/);
  });

  it("is refused in an adult's session shared with the household, whose co-users a child may be", async () => {
    const sessionId = await signedIn.adult.createSession('smart_home');
    await signedIn.adult.request('PATCH', `/sessions/${sessionId}`, { shared: true });
    const before = hearth.llm.requests.length;
    hearth.llm.script(
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Run cat /etc/hostname in the terminal', profile_id: 'server_admin' } }] },
      { content: 'Done.' },
    );
    expect((await signedIn.child.request('POST', `/sessions/${sessionId}/messages`, { content: 'Ask a server admin helper' })).status).toBe(200);
    expect(serverAdminRan(before)).toBe(false);
    expect((await toolResults(signedIn.adult, sessionId))[0]).toMatch(/shared with the household/);
  });

  it("still runs for an adult in their own session, under a profile they may use", async () => {
    const sessionId = await signedIn.adult.createSession('smart_home');
    const before = hearth.llm.requests.length;
    hearth.llm.script(
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Say hello', profile_id: 'server_admin' } }] },
      { content: 'Hello from the helper.' },
      { content: 'Done.' },
    );
    expect((await signedIn.adult.request('POST', `/sessions/${sessionId}/messages`, { content: 'Ask a server admin helper' })).status).toBe(200);
    expect(serverAdminRan(before)).toBe(true);
    expect((await toolResults(signedIn.adult, sessionId))[0]).toContain('Hello from the helper.');
  });
});

describe('switch_profile in a session shared with the household', () => {
  it("is refused on the word of whoever writes there, even once its person allowed the ask", async () => {
    const { owner, child } = signedIn;
    const sessionId = await owner.createSession('smart_home');
    await owner.request('PATCH', `/sessions/${sessionId}`, { shared: true });
    hearth.llm.script({ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'secretary' } }] }, { content: 'Done.' });
    const socket = await owner.connect(sessionId);
    await socket.next('session_sync');
    const answered = child.request('POST', `/sessions/${sessionId}/messages`, { content: 'Switch to the secretary' });
    const asked = await socket.next('approval_required');
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'allow' });
    expect((await answered).status).toBe(200);
    socket.close();
    expect((await toolResults(owner, sessionId))[0]).toMatch(/only its person switches its profile/);
    expect((await owner.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('smart_home');
  });
});

describe("the schedule tool in a session shared with the household", () => {
  it("neither lists nor changes the session person's schedules for whoever writes there", async () => {
    const { adult, child } = signedIn;
    const created = await adult.request('POST', '/schedules', { name: 'Doctor', prompt: 'Remind me of the doctor at 9', every: '1d', profile_id: 'secretary' });
    expect(created.status).toBe(201);
    const sessionId = await adult.createSession('secretary');
    await adult.request('PATCH', `/sessions/${sessionId}`, { shared: true });
    hearth.llm.script(
      { toolCalls: [{ name: 'schedule', arguments: { action: 'list' } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'cancel', id: created.body.schedule.id } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'create', name: 'Mine now', prompt: 'Hello', every: '1h' } }] },
      { content: 'Done.' },
    );
    expect((await child.request('POST', `/sessions/${sessionId}/messages`, { content: 'What are the schedules here?' })).status).toBe(200);
    const results = await toolResults(adult, sessionId);
    expect(results).toHaveLength(3);
    for (const result of results) expect(result).toMatch(/shared with the household/);
    expect(results.join('\n')).not.toContain('doctor');
    const { body } = await adult.request('GET', '/schedules');
    expect(body.schedules.map((schedule: any) => schedule.name)).toEqual(['Doctor']);
  });
});

describe('the last owner', () => {
  it('stays when two owners demote each other at the same moment, and when they remove each other', async () => {
    const second = await addPerson(hearth, { role: 'owner' });
    const third = await addPerson(hearth, { role: 'owner' });
    const { owner } = signedIn;
    const demoted = await Promise.all([
      owner.request('PATCH', `/people/${second.person.id}`, { role: 'adult' }),
      second.request('PATCH', `/people/${owner.person.id}`, { role: 'adult' }),
      third.request('PATCH', `/people/${third.person.id}`, { role: 'adult' }),
    ]);
    expect(demoted.map((answer) => answer.status).sort()).toEqual([200, 200, 403]);
    const owners = async () => (await hearth.deps.household.people()).filter((person) => person.role === 'owner');
    expect(await owners()).toHaveLength(1);

    const [survivor] = await owners();
    const fourth = await addPerson(hearth, { role: 'owner' });
    const asSurvivor = [owner, second, third].find((each) => each.person.id === survivor!.id)!;
    const removed = await Promise.all([
      asSurvivor.request('DELETE', `/people/${fourth.person.id}?sessions=delete`),
      fourth.request('DELETE', `/people/${survivor!.id}?sessions=delete`),
    ]);
    // The other is refused: as the last owner (403), or because its sender was removed a moment before (401).
    expect(removed.map((answer) => answer.status).sort()).toEqual([204, expect.toSatisfy((status: number) => status === 401 || status === 403)]);
    expect(await owners()).toHaveLength(1);
    expect((await hearth.request('GET', '/health', undefined, (await owners())[0]!.id === fourth.person.id ? fourth.cookieHeaders : asSurvivor.cookieHeaders)).status).toBe(200);
  });
});
