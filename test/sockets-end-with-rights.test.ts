import { describe, expect, it } from 'vitest';
import { signInCookie } from '../src/server/identify.ts';
import { EventSocket } from './support/event-socket.ts';
import type { Hearth } from './support/hearth-server.ts';
import { useHearth } from './support/hearth-server.ts';
import { household, sessionFrom, type SignedIn } from './support/people.ts';

// An open socket was judged when it opened; these check that it ends once that judgement no longer holds.

const start = useHearth();

/** The next sessions_changed about `sessionId` on an events socket: its change. */
async function nextChange(page: EventSocket, sessionId: string): Promise<string> {
  const event = (await page.nextMatching((frame: any) => frame.type === 'sessions_changed' && frame.session_id === sessionId, `sessions_changed of ${sessionId}`)) as any;
  return event.change;
}

/** A second sign-in of the same person, as another device holds it. */
async function anotherDevice(hearth: Hearth, someone: SignedIn): Promise<{ cookieHeaders: Record<string, string>; events(): Promise<EventSocket> }> {
  const response = await fetch(`${hearth.baseUrl}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: someone.person.name, passphrase: someone.passphrase }),
  });
  expect(response.status).toBe(200);
  const cookieHeaders = { cookie: `${signInCookie}=${sessionFrom(response.headers.getSetCookie())}` };
  return { cookieHeaders, events: () => EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`, cookieHeaders) };
}

describe('unsharing a session', () => {
  it("closes the other person's socket on it with 4004 and tells their page it is gone; the owner's stay open", async () => {
    const hearth = await start();
    const { owner, people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const sessionId = await owner.createSession();
    expect((await owner.request('PATCH', `/sessions/${sessionId}`, { shared: true })).status).toBe(200);
    const adultSocket = await adult.connect(sessionId);
    const adultPage = await adult.events();
    const ownerSocket = await owner.connect(sessionId);
    const ownerPage = await owner.events();

    expect((await owner.request('PATCH', `/sessions/${sessionId}`, { shared: false })).status).toBe(200);
    expect(await adultSocket.closed()).toBe(4004);
    expect(await nextChange(adultPage, sessionId)).toBe('deleted');
    expect(await nextChange(ownerPage, sessionId)).toBe('updated');
    ownerSocket.send('not json');
    expect((await ownerSocket.next('error')).code).toBe('invalid_frame');
    expect(ownerPage.events.filter((frame: any) => frame.type === 'sessions_changed' && frame.change === 'deleted')).toEqual([]);
    // Opening it again is refused as a missing session.
    expect(await (await adult.connect(sessionId)).closed()).toBe(4004);
  });
});

describe('signing out', () => {
  it("closes that sign-in's sockets with 4001 and not another device's; everywhere closes every sign-in's, not a token's", async () => {
    const hearth = await start();
    const { people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const sessionId = await adult.createSession();
    const laptopSocket = await adult.connect(sessionId);
    const laptopPage = await adult.events();
    const phone = await anotherDevice(hearth, adult);
    const phonePage = await phone.events();
    const scriptPage = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`, adult.tokenHeaders);

    expect((await adult.request('POST', '/auth/sign-out', {})).body).toEqual({ ended: 1 });
    expect(await laptopSocket.closed()).toBe(4001);
    expect(await laptopPage.closed()).toBe(4001);
    await expect(adult.events()).rejects.toThrow('HTTP 401');
    // The phone's page still hears what happens after the laptop's ended.
    expect((await adult.request('PATCH', `/sessions/${sessionId}`, { title: 'Still here' }, adult.tokenHeaders)).status).toBe(200);
    expect(await nextChange(phonePage, sessionId)).toBe('updated');

    expect((await adult.request('POST', '/auth/sign-out', { everywhere: true }, phone.cookieHeaders)).body).toEqual({ ended: 1 });
    expect(await phonePage.closed()).toBe(4001);
    expect((await adult.request('PATCH', `/sessions/${sessionId}`, { title: 'Scripted' }, adult.tokenHeaders)).status).toBe(200);
    expect(await nextChange(scriptPage, sessionId)).toBe('updated');
    expect(await nextChange(scriptPage, sessionId)).toBe('updated');
    expect(scriptPage.closeCode).toBeUndefined();

    expect((await adult.request('DELETE', `/me/tokens/${(await adult.request('GET', '/me/tokens', undefined, adult.tokenHeaders)).body[0].id}`, undefined, adult.tokenHeaders)).status).toBe(204);
    expect(await scriptPage.closed()).toBe(4001);
  });
});

describe('the owner', () => {
  it("removing someone closes their sockets with 4001; a new role closes them too, and they open again as the new role", async () => {
    const hearth = await start();
    const { owner, people } = await household(hearth, ['child', 'adult'] as const);
    const [child, adult] = people;
    const sessionId = await child.createSession();
    const childSocket = await child.connect(sessionId);
    const childPage = await child.events();
    const adultPage = await adult.events();

    expect((await owner.request('PATCH', `/people/${adult.person.id}`, { role: 'child' })).status).toBe(200);
    expect(await adultPage.closed()).toBe(4001);
    const reopened = await adult.events();
    await reopened.nextMatching((frame: any) => frame.type === 'hello', 'hello');
    expect((await adult.request('GET', '/me')).body.role).toBe('child');

    expect((await owner.request('DELETE', `/people/${child.person.id}?sessions=give_to_owner`)).status).toBe(204);
    expect(await childSocket.closed()).toBe(4001);
    expect(await childPage.closed()).toBe(4001);
    expect(reopened.closeCode).toBeUndefined();
  });
});

describe('the 401', () => {
  it('lists the ways this server accepts in error.sign_in', async () => {
    const alone = await start({ env: { AUTH_TOKEN: 'the-token' } });
    const refused = await alone.request('GET', '/sessions', undefined, {});
    expect(refused.status).toBe(401);
    expect(refused.body.error.sign_in).toEqual(['api_token', 'auth_token']);

    const hearth = await start();
    await household(hearth, ['adult'] as const);
    const household401 = await hearth.request('GET', '/sessions', undefined, {});
    expect(household401.status).toBe(401);
    expect(household401.body.error).toMatchObject({ code: 'unauthorized', sign_in: ['passphrase', 'passkey', 'api_token'] });
  });
});
