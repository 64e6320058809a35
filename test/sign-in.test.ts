import { describe, expect, it } from 'vitest';
import { signInCookie } from '../src/server/identify.ts';
import { useHearth } from './support/hearth-server.ts';
import { addPerson, household, signInOwner } from './support/people.ts';

const start = useHearth();

async function postSignIn(baseUrl: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json(), cookies: response.headers.getSetCookie() };
}

describe('POST /auth/sign-in', () => {
  it('answers the person and sets the cookie HttpOnly, SameSite=Strict, Path=/, without Secure over plain HTTP', async () => {
    const hearth = await start();
    const owner = await signInOwner(hearth, 'a long passphrase');
    const response = await postSignIn(hearth.baseUrl, { name: 'owner', passphrase: 'a long passphrase' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: owner.person.id, name: 'Owner', role: 'owner' });
    expect(response.cookies).toHaveLength(1);
    const attributes = response.cookies[0]!.split('; ');
    expect(attributes[0]).toMatch(new RegExp(`^${signInCookie}=[A-Za-z0-9_-]{43}$`));
    expect(attributes.slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=2592000', 'Path=/', 'SameSite=Strict']);
  });

  it('adds Secure when a proxy on this machine says the request came over HTTPS', async () => {
    const hearth = await start();
    await signInOwner(hearth, 'a long passphrase');
    const response = await postSignIn(hearth.baseUrl, { name: 'Owner', passphrase: 'a long passphrase' }, { 'x-forwarded-proto': 'https' });
    expect(response.cookies[0]!.split('; ')).toContain('Secure');
  });

  it('lets the cookie name its person on every route, and refuses a wrong passphrase and an unknown name alike', async () => {
    const hearth = await start();
    const { owner, people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    expect((await hearth.request('GET', '/sessions')).status).toBe(401);
    expect((await adult.request('GET', '/sessions')).status).toBe(200);
    expect((await owner.request('GET', '/sessions', undefined, owner.tokenHeaders)).status).toBe(200);
    const wrong = await postSignIn(hearth.baseUrl, { name: adult.person.name, passphrase: 'not it at all' });
    const unknown = await postSignIn(hearth.baseUrl, { name: 'nobody here', passphrase: 'not it at all' });
    for (const response of [wrong, unknown]) {
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('sign_in_failed');
      expect(response.cookies).toEqual([]);
    }
    expect(wrong.body).toEqual(unknown.body);
  });

  it('makes people of each role for other tests', async () => {
    const hearth = await start();
    const child = await addPerson(hearth, { role: 'child', name: 'Kid' });
    expect(child.person).toMatchObject({ name: 'Kid', role: 'child', hasPassphrase: true });
    expect((await child.request('GET', '/sessions')).status).toBe(200);
    expect((await child.request('GET', '/sessions', undefined, child.tokenHeaders)).status).toBe(200);
  });
});
