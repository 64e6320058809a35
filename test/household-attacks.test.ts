// Attacks on the household through the model (issue 33's review): a child or a guest, or someone
// writing in a session shared with them, steering the model to reach past their role — a
// sub-agent under a profile their role may not use, someone else's schedules — on one real server
// with the shipped profiles and a scripted model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../src/people/person.ts';
import { EventSocket } from './support/event-socket.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { addPerson, household, type SignedIn } from './support/people.ts';

/** A profile everyone may use whose every call asks, the grown-ups deciding. */
const porch = `---
id: porch
name: Porch
people: [owner, adult, child, guest]
approvers: [owner, adult]
tools: [scratchpad]
approvals:
  default: ask
---
You help at the door.
`;

let hearth: Hearth;
const signedIn = {} as Record<Role, SignedIn>;

beforeAll(async () => {
  hearth = await startHearth({ profiles: { porch } });
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
    const answered = child.request('POST', `/sessions/${sessionId}/messages`, { content: 'Switch to the secretary', wait: 'end' });
    const asked = await socket.next('approval_required');
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'allow' });
    // A REST turn may answer once a call waits for a person (202) or at its end (200): the socket says when it ended.
    expect([200, 202]).toContain((await answered).status);
    await socket.next('stream_end');
    socket.close();
    expect((await toolResults(owner, sessionId))[0]).toMatch(/only its person switches its profile/);
    expect((await owner.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('smart_home');
  });
});

describe('a call asked in a session shared with the household', () => {
  it("is asked by whoever wrote, regenerated or edited there, not by the session's person, and waits for those who decide theirs", async () => {
    const { owner, guest } = signedIn;
    const sessionId = await owner.createSession('porch');
    await owner.request('PATCH', `/sessions/${sessionId}`, { shared: true });
    const publish = { toolCalls: [{ name: 'scratchpad', arguments: { action: 'read' } }] };
    const ownerSocket = await owner.connect(sessionId);
    await ownerSocket.next('session_sync');
    const guestSocket = await guest.connect(sessionId);
    await guestSocket.next('session_sync');

    const askedOf = async (start: () => void) => {
      start();
      const forOwner = await ownerSocket.next('approval_required');
      const forGuest = await guestSocket.next('approval_required');
      expect(forGuest.call_id).toBe(forOwner.call_id);
      ownerSocket.send({ type: 'approve', call_id: forOwner.call_id, decision: 'deny' });
      await ownerSocket.next('stream_end');
      return { askedBy: (forOwner as any).asked_by?.name, guestMayDecide: (forGuest as any).can_decide };
    };
    hearth.llm.script(publish, { content: 'Left it shut.' });
    expect(await askedOf(() => guestSocket.send({ type: 'message', content: 'Open the garage' }))).toEqual({ askedBy: guest.person.name, guestMayDecide: false });
    hearth.llm.script(publish, { content: 'Left it shut.' });
    expect(await askedOf(() => guestSocket.send({ type: 'regenerate' }))).toEqual({ askedBy: guest.person.name, guestMayDecide: false });
    hearth.llm.script(publish, { content: 'Left it shut.' });
    expect(await askedOf(() => ownerSocket.send({ type: 'message', content: 'Open the garage' }))).toEqual({ askedBy: owner.person.name, guestMayDecide: false });
    const audit = (await guest.request('GET', `/approvals?status=all&session_id=${sessionId}`)).body.approvals;
    expect(audit.map((approval: any) => approval.asked_by.name)).toEqual([guest.person.name, guest.person.name]);
    ownerSocket.close();
    guestSocket.close();
  });
});

describe('a schedule running in a session shared with its person', () => {
  it("asks its calls as the schedule's person, not as the session's", async () => {
    const { owner, adult } = signedIn;
    const sessionId = await owner.createSession('porch');
    await owner.request('PATCH', `/sessions/${sessionId}`, { shared: true });
    const created = await adult.request('POST', '/schedules', { name: 'Notes', prompt: 'Read the notes', every: '1d', profile_id: 'porch', session_id: sessionId });
    expect(created.body.schedule.session_id).toBe(sessionId);
    const ownerSocket = await owner.connect(sessionId);
    await ownerSocket.next('session_sync');
    hearth.llm.script({ toolCalls: [{ name: 'scratchpad', arguments: { action: 'read' } }] }, { content: 'Read them.' });
    expect((await adult.request('POST', `/schedules/${created.body.schedule.id}/run`)).status).toBe(202);
    const asked = await ownerSocket.next('approval_required');
    expect((asked as any).asked_by.name).toBe(adult.person.name);
    expect((await adult.request('POST', `/sessions/${sessionId}/approvals/${asked.call_id}`, { decision: 'deny' })).status).toBe(200);
    await ownerSocket.next('stream_end');
    ownerSocket.close();
    expect((await adult.request('DELETE', `/schedules/${created.body.schedule.id}`)).status).toBe(204);
  });
});

describe('"Allow for this session" in a session shared with the household', () => {
  it("allows the same call again for the person whose ask it was, not for someone else writing there", async () => {
    const { owner, guest } = signedIn;
    const sessionId = await owner.createSession('porch');
    await owner.request('PATCH', `/sessions/${sessionId}`, { shared: true });
    const read = { toolCalls: [{ name: 'scratchpad', arguments: { action: 'read' } }] };
    const ownerSocket = await owner.connect(sessionId);
    await ownerSocket.next('session_sync');

    hearth.llm.script(read, { content: 'Read it.' });
    ownerSocket.send({ type: 'message', content: 'Read the notes' });
    const first = await ownerSocket.next('approval_required');
    ownerSocket.send({ type: 'approve', call_id: first.call_id, decision: 'allow', remember: 'session' });
    await ownerSocket.next('stream_end');

    // The guest's same call asks again, and the owner's own again does not.
    hearth.llm.script(read, { content: 'Read it.' });
    const guestTurn = guest.request('POST', `/sessions/${sessionId}/messages`, { content: 'Read the notes', wait: 'end' });
    const guestAsk = await ownerSocket.next('approval_required');
    expect((guestAsk as any).asked_by.name).toBe(guest.person.name);
    ownerSocket.send({ type: 'approve', call_id: guestAsk.call_id, decision: 'deny' });
    expect([200, 202]).toContain((await guestTurn).status);
    await ownerSocket.next('stream_end');
    hearth.llm.script(read, { content: 'Read it.' });
    expect((await owner.request('POST', `/sessions/${sessionId}/messages`, { content: 'Read the notes again' })).status).toBe(200);
    const audit = (await owner.request('GET', `/approvals?status=all&session_id=${sessionId}`)).body.approvals;
    expect(audit.map((approval: any) => [approval.asked_by.name, approval.decision, approval.rule])).toEqual([
      [owner.person.name, 'allow', 'remembered for this session'],
      [guest.person.name, 'deny', 'default'],
      [owner.person.name, 'allow', 'default'],
    ]);
    ownerSocket.close();
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

describe('an ended sign-in or a revoked token', () => {
  /** Every way in a page or a script has, tried with `headers`: each answer's status, or the socket's refusal. */
  async function everyWayIn(headers: Record<string, string>, sessionId: string): Promise<string[]> {
    const ws = hearth.baseUrl.replace('http', 'ws');
    const form = new FormData();
    form.append('file', new Blob(['a note']), 'note.txt');
    const upload = await fetch(`${hearth.baseUrl}/sessions/${sessionId}/files`, { method: 'POST', body: form, headers });
    const refused = (connecting: Promise<unknown>) => connecting.then(() => 'open', (error: Error) => error.message);
    return [
      String((await hearth.request('GET', '/me', undefined, headers)).status),
      String((await hearth.request('GET', `/sessions/${sessionId}`, undefined, headers)).status),
      String((await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' }, headers)).status),
      String((await hearth.request('GET', '/memory', undefined, headers)).status),
      String((await hearth.request('GET', '/notifications', undefined, headers)).status),
      String((await hearth.request('GET', '/schedules', undefined, headers)).status),
      String((await hearth.request('GET', '/approvals', undefined, headers)).status),
      String((await hearth.request('POST', '/me/tokens', { name: 'a new one' }, headers)).status),
      String(upload.status),
      await refused(EventSocketOf(`${ws}/ws/sessions/${sessionId}`, headers)),
      await refused(EventSocketOf(`${ws}/ws/events`, headers)),
    ];
  }
  const EventSocketOf = (url: string, headers: Record<string, string>) => EventSocket.connect(url, headers).then((socket) => socket.close());
  const refusedEverywhere = [...Array<string>(9).fill('401'), 'HTTP 401', 'HTTP 401'];

  it('is refused on every route and both sockets once signed out everywhere, while the token stays', async () => {
    const someone = await addPerson(hearth, { role: 'adult' });
    const sessionId = await someone.createSession('smart_home');
    hearth.llm.script({ content: 'Hello.' });
    expect(await everyWayIn(someone.cookieHeaders, sessionId)).toEqual(['200', '200', '200', '200', '200', '200', '200', '201', '200', 'open', 'open']);
    expect((await someone.request('POST', '/auth/sign-out', { everywhere: true })).body).toEqual({ ended: 1 });
    expect(await everyWayIn(someone.cookieHeaders, sessionId)).toEqual(refusedEverywhere);
    // Signing in again gives a new cookie; the old one stays dead.
    expect((await hearth.request('GET', '/me', undefined, someone.tokenHeaders)).status).toBe(200);
  });

  it('is refused on every route and both sockets at once when revoked, and a removed person\'s cookie and token alike', async () => {
    const someone = await addPerson(hearth, { role: 'child' });
    const sessionId = await someone.createSession('smart_home');
    const { body: tokens } = await someone.request('GET', '/me/tokens');
    expect((await someone.request('DELETE', `/me/tokens/${tokens[0].id}`)).status).toBe(204);
    expect(await everyWayIn(someone.tokenHeaders, sessionId)).toEqual(refusedEverywhere);

    const removed = await addPerson(hearth, { role: 'guest' });
    const guestSession = await removed.createSession('smart_home');
    expect((await signedIn.owner.request('DELETE', `/people/${removed.person.id}?sessions=give_to_owner`)).status).toBe(204);
    expect(await everyWayIn(removed.cookieHeaders, guestSession)).toEqual(refusedEverywhere);
    expect(await everyWayIn(removed.tokenHeaders, guestSession)).toEqual(refusedEverywhere);
  });
});

describe('an invitation', () => {
  it('lets one person in when two race with its code, and nobody after', async () => {
    const { body: invitation } = await signedIn.owner.request('POST', '/people/invitations', { role: 'adult' });
    const accept = (name: string) => hearth.request('POST', '/auth/invitations/accept', { code: invitation.code, name, passphrase: 'passphrase of a racer' });
    const answers = await Promise.all([accept('Racer one'), accept('Racer two'), accept('Racer three')]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 410, 410]);
    expect((await accept('Racer four')).body.error.code).toBe('invitation_not_valid');
    const names = (await hearth.deps.household.people()).map((person) => person.name);
    expect(names.filter((name) => name.startsWith('Racer'))).toHaveLength(1);
  });
});

describe('a name changed by case or spaces', () => {
  it('signs in the same person when only its case changed, and nobody when spaces or wide letters were added', async () => {
    // The throttle counts a name lowercased (test/internals/household-accounts.test.ts); names are compared
    // as the unique index compares them, ASCII case only, so no other spelling reaches a person past its count.
    const someone = await addPerson(hearth, { role: 'adult', name: 'Quinn' });
    const tries = ['Quinn ', ' Quinn', 'Qu inn', 'quinn', 'ＱＵＩＮＮ', 'QUINN'];
    const answers = [];
    for (const name of tries) answers.push((await hearth.request('POST', '/auth/sign-in', { name, passphrase: someone.passphrase })).status);
    expect(answers).toEqual([401, 401, 401, 200, 401, 200]);
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
