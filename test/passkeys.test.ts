import { describe, expect, it } from 'vitest';
import { signInCookie } from '../src/server/identify.ts';
import { useHearth, type Hearth } from './support/hearth-server.ts';
import { household, sessionFrom, type SignedIn } from './support/people.ts';
import { softwarePasskey } from './support/software-passkey.ts';

const start = useHearth();

/** Requests as a browser at http://localhost:<port> would send them (passkeys are offered only to localhost or HTTPS). */
function atLocalhost(hearth: Hearth) {
  const origin = hearth.baseUrl.replace('127.0.0.1', 'localhost');
  const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(origin + url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text), cookies: response.headers.getSetCookie() };
  };
  return { origin, post };
}

async function registered(hearth: Hearth, person: SignedIn) {
  const { origin, post } = atLocalhost(hearth);
  const authenticator = softwarePasskey();
  const options = await post('/me/passkeys/options', {}, person.cookieHeaders);
  expect(options.status).toBe(200);
  expect(options.body.rp.id).toBe('localhost');
  const created = await post('/me/passkeys', { name: 'laptop', credential: authenticator.create(options.body, origin) }, person.cookieHeaders);
  return { authenticator, created };
}

describe('passkeys', () => {
  it('are registered by a signed-in person and then sign them in without a name, as the cookie does', async () => {
    const hearth = await start();
    const { people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const { origin, post } = atLocalhost(hearth);
    const { authenticator, created } = await registered(hearth, adult);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: 'laptop', created_at: expect.any(String), last_used_at: null });

    const options = await post('/auth/passkey/options', {});
    const signedIn = await post('/auth/passkey', { credential: authenticator.get(options.body, origin) });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toEqual({ id: adult.person.id, name: adult.person.name, role: 'adult' });
    expect(signedIn.cookies[0]!.split('; ')).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/']));
    const cookie = { cookie: `${signInCookie}=${sessionFrom(signedIn.cookies)}` };
    expect((await hearth.request('GET', '/me', undefined, cookie)).body).toMatchObject({ id: adult.person.id, via: 'sign_in' });
    expect((await adult.request('GET', '/me/passkeys')).body).toEqual([{ ...created.body, last_used_at: expect.any(String) }]);
  });

  it('refuse a replayed answer, an answer to another challenge, and a removed passkey', async () => {
    const hearth = await start();
    const { people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const { origin, post } = atLocalhost(hearth);
    const { authenticator, created } = await registered(hearth, adult);

    const options = await post('/auth/passkey/options', {});
    const answer = authenticator.get(options.body, origin);
    expect((await post('/auth/passkey', { credential: answer })).status).toBe(200);
    const replayed = await post('/auth/passkey', { credential: answer });
    expect(replayed.status).toBe(401);
    expect(replayed.body.error.code).toBe('passkey_failed');
    expect(replayed.cookies).toEqual([]);

    const made = authenticator.get({ challenge: Buffer.from('a challenge nobody issued').toString('base64url'), rpId: 'localhost' }, origin);
    expect((await post('/auth/passkey', { credential: made })).body.error.code).toBe('passkey_failed');

    expect((await adult.request('DELETE', `/me/passkeys/${created.body.id}`)).status).toBe(204);
    const fresh = await post('/auth/passkey/options', {});
    expect((await post('/auth/passkey', { credential: authenticator.get(fresh.body, origin) })).body.error.code).toBe('passkey_failed');
  });

  it('are offered only to localhost or HTTPS, and each person lists and removes only their own', async () => {
    const hearth = await start();
    const { owner, people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const overIp = await owner.request('POST', '/me/passkeys/options', {});
    expect(overIp.status).toBe(400);
    expect(overIp.body.error.message).toContain('HTTPS');
    const { created } = await registered(hearth, adult);
    expect((await owner.request('GET', '/me/passkeys')).body).toEqual([]);
    expect((await owner.request('DELETE', `/me/passkeys/${created.body.id}`)).body.error.code).toBe('passkey_not_found');
  });
});
