import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signInCookie } from '../src/server/identify.ts';
import { useHearth } from './support/hearth-server.ts';
import { household, sessionFrom } from './support/people.ts';

const start = useHearth();

describe('owner-only routes', () => {
  it('answer 403 forbidden to an adult, a child and a guest, by cookie and by token alike', async () => {
    const hearth = await start();
    const { owner, people } = await household(hearth, ['adult', 'child', 'guest'] as const);
    const calls: [string, string, unknown?][] = [
      ['GET', '/people'],
      ['POST', '/people', { name: 'Someone', role: 'adult', passphrase: 'passphrase of someone' }],
      ['GET', `/people/${owner.person.id}`],
      ['PATCH', `/people/${owner.person.id}`, { role: 'guest' }],
      ['DELETE', `/people/${owner.person.id}?sessions=delete`],
      ['POST', '/people/invitations', { role: 'owner' }],
    ];
    for (const someone of people) {
      for (const [method, url, body] of calls) {
        for (const headers of [someone.cookieHeaders, someone.tokenHeaders]) {
          const response = await someone.request(method, url, body, headers);
          expect(response.status, `${someone.person.role} ${method} ${url}`).toBe(403);
          expect(response.body.error.code).toBe('forbidden');
        }
      }
    }
    expect((await owner.request('GET', '/people')).body.map((person: { role: string }) => person.role)).toEqual(['owner', 'adult', 'child', 'guest']);
  });
});

describe('people', () => {
  it('are added, changed and removed by the owner; removing asks what becomes of their sessions', async () => {
    const hearth = await start();
    const { owner, people } = await household(hearth, ['adult', 'child'] as const);
    const [adult, child] = people;

    const added = await owner.request('POST', '/people', { name: 'Grandma', role: 'guest', passphrase: 'passphrase of Grandma' });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ id: expect.any(String), name: 'Grandma', role: 'guest', has_passphrase: true, created_at: expect.any(String) });
    const taken = await owner.request('POST', '/people', { name: 'grandma', role: 'adult', passphrase: 'another passphrase' });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('name_taken');

    const promoted = await owner.request('PATCH', `/people/${child.person.id}`, { role: 'adult' });
    expect(promoted.body).toMatchObject({ id: child.person.id, role: 'adult' });
    expect((await child.request('GET', '/me')).body.role).toBe('adult');

    // A passphrase reset ends the person's sign-ins.
    expect((await owner.request('PATCH', `/people/${child.person.id}`, { passphrase: 'a new one for the kid' })).status).toBe(200);
    expect((await child.request('GET', '/me')).status).toBe(401);

    const adultSession = await adult.createSession();
    const add = async (library: 'mine' | 'household') => {
      const added = await hearth.deps.documents.add({ caller: { person: adult.person, via: 'sign_in' }, library, name: `${library}.txt`, content: Buffer.from(`Notes of the ${library} library.`), source: 'rest' });
      if (!added.ok) throw new Error(added.message);
      return added.document.id;
    };
    const [ownDocument, householdDocument] = [await add('mine'), await add('household')];
    const ownFile = hearth.deps.documents.original({ person: adult.person, via: 'sign_in' }, ownDocument)!.path;
    const unsure = await owner.request('DELETE', `/people/${adult.person.id}`);
    expect(unsure.status).toBe(400);
    expect(unsure.body.error.message).toContain('?sessions=delete');
    expect((await owner.request('DELETE', `/people/${adult.person.id}?sessions=give_to_owner`)).status).toBe(204);
    expect((await owner.request('GET', `/people/${adult.person.id}`)).body.error.code).toBe('person_not_found');
    expect((await adult.request('GET', '/me')).status).toBe(401);
    expect((await adult.request('GET', '/me', undefined, adult.tokenHeaders)).status).toBe(401);
    expect((await hearth.deps.sessions!.find(adultSession))?.personId).toBe(owner.person.id);
    // Their own documents went with them, file and all; what they gave the household stays.
    expect(hearth.deps.documents.get({ person: adult.person, via: 'sign_in' }, ownDocument)).toBeUndefined();
    expect(existsSync(ownFile)).toBe(false);
    expect(hearth.deps.documents.list({ person: owner.person, via: 'loopback' }).map((document) => document.id)).toEqual([householdDocument]);

    const grandma = added.body.id as string;
    const grandmaSession = (await hearth.deps.sessions!.create({ personId: grandma, profileId: 'smart_home' }));
    expect(grandmaSession.ok).toBe(true);
    expect((await owner.request('DELETE', `/people/${grandma}?sessions=delete`)).status).toBe(204);
    expect(await hearth.deps.sessions!.find(grandmaSession.ok ? grandmaSession.session.id : '')).toBeUndefined();
  });

  it('keep one owner: the last one can be neither demoted nor removed', async () => {
    const hearth = await start();
    const { owner } = await household(hearth, ['adult'] as const);
    const demoted = await owner.request('PATCH', `/people/${owner.person.id}`, { role: 'adult' });
    expect(demoted.status).toBe(403);
    expect(demoted.body.error.code).toBe('forbidden');
    const removed = await owner.request('DELETE', `/people/${owner.person.id}?sessions=delete`);
    expect(removed.status).toBe(403);
  });
});

describe('invitations', () => {
  it('let one person join with the role, signed in at once, and are refused when used again', async () => {
    const hearth = await start();
    const { owner } = await household(hearth, [] as const);
    const invited = await owner.request('POST', '/people/invitations', { role: 'child' });
    expect(invited.status).toBe(201);
    const { code, url, expires_at: expiresAt } = invited.body;
    expect(url).toBe(`${hearth.baseUrl}/#invitation=${code}`);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(7 * 24 * 3600_000 - 60_000);

    const accept = (name: string) =>
      fetch(`${hearth.baseUrl}/auth/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code, name, passphrase: `passphrase of ${name}` }) });
    const joined = await accept('Robin');
    expect(joined.status).toBe(201);
    expect(await joined.json()).toMatchObject({ name: 'Robin', role: 'child', has_passphrase: true });
    const cookie = { cookie: `${signInCookie}=${sessionFrom(joined.headers.getSetCookie())}` };
    expect((await hearth.request('GET', '/me', undefined, cookie)).body).toMatchObject({ name: 'Robin', role: 'child', via: 'sign_in' });

    const again = await accept('Mallory');
    expect(again.status).toBe(410);
    expect((await again.json()).error.code).toBe('invitation_not_valid');
    expect(again.headers.getSetCookie()).toEqual([]);
    expect((await owner.request('GET', '/people')).body.map((person: { name: string }) => person.name)).toEqual(['Owner', 'Robin']);
  });
});

describe('personal API tokens', () => {
  it('are shown once, listed without the secret, and refused at once when revoked', async () => {
    const hearth = await start();
    const { people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const created = await adult.request('POST', '/me/tokens', { name: 'backup script' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: 'backup script', token: expect.stringMatching(/^hearth_[A-Za-z0-9_-]{43}$/), created_at: expect.any(String) });
    const bearer = { authorization: `Bearer ${created.body.token}` };
    expect((await hearth.request('GET', '/me', undefined, bearer)).body).toMatchObject({ id: adult.person.id, via: 'api_token' });

    const listed = await adult.request('GET', '/me/tokens');
    expect(listed.body.map((token: { name: string }) => token.name)).toEqual(['tests', 'backup script']);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);

    expect((await adult.request('DELETE', `/me/tokens/${created.body.id}`)).status).toBe(204);
    const refused = await hearth.request('GET', '/me', undefined, bearer);
    expect(refused.status).toBe(401);
    expect((await adult.request('DELETE', `/me/tokens/${created.body.id}`)).body.error.code).toBe('token_not_found');
  });
});
