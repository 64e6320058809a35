import { describe, expect, it } from 'vitest';
import { signInCookie } from '../src/server/identify.ts';
import { useHearth } from './support/hearth-server.ts';
import { ManualClock } from './support/manual-clock.ts';
import { addPerson, household, sessionFrom, signInOwner } from './support/people.ts';
import { recordingLogger } from './support/recording-logger.ts';
import { waitUntil } from './support/wait-until.ts';

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

describe('failed sign-ins', () => {
  it('are slowed after three, doubling to a minute, logged at warn with name and address, and never keep out the right passphrase', async () => {
    const clock = new ManualClock('2026-11-28T12:00:00.000Z');
    const { logger, lines } = recordingLogger();
    const hearth = await start({ clock, logger });
    const owner = await signInOwner(hearth, 'the right passphrase');
    // The wait before each attempt is checked: none for the first three, then 1 s doubling, at most a minute.
    const waits = [0, 0, 0, 1000, 2000, 4000, 8000, 16000, 32000, ...Array<number>(12).fill(60_000)];
    const attempt = async (index: number, passphrase: string) => {
      let settled = false;
      const pending = postSignIn(hearth.baseUrl, { name: 'Owner', passphrase }).finally(() => (settled = true));
      const wait = waits[index]!;
      if (wait > 0) {
        const due = clock.now().getTime() + wait;
        await waitUntil(() => clock.nextTimer() === new Date(due).toISOString());
        clock.advanceTo(new Date(due - 1));
        await hearth.request('GET', '/health');
        expect(settled, `attempt ${index + 1} answered before its wait`).toBe(false);
        clock.advanceTo(new Date(due));
      }
      return pending;
    };
    for (let index = 0; index < 20; index++) {
      const response = await attempt(index, `wrong guess ${index}`);
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('sign_in_failed');
    }
    const failures = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'sign-in failed');
    expect(failures).toHaveLength(20);
    expect(failures[19]).toMatchObject({ level: 40, name: 'Owner', address: '127.0.0.1', failures: 20 });

    const right = await attempt(20, 'the right passphrase');
    expect(right.status).toBe(200);
    expect(right.body).toEqual({ id: owner.person.id, name: 'Owner', role: 'owner' });
    // 21 scrypt checks: 0.1 s each on a free core, up to a second each on a loaded 2-core machine.
  }, 90_000);
});

describe('behind a reverse proxy on this machine', () => {
  it("counts failures per address the proxy forwards, so one guesser does not slow everyone behind it", async () => {
    const clock = new ManualClock('2026-11-28T12:00:00.000Z');
    const { logger, lines } = recordingLogger();
    const hearth = await start({ clock, logger });
    const { people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const via = (address: string) => ({ 'x-forwarded-for': `198.51.100.99, ${address}` });
    // Three free failures from one address, each under a name of its own (so only the address counts).
    for (const index of [1, 2, 3]) expect((await postSignIn(hearth.baseUrl, { name: `nobody ${index}`, passphrase: 'a guess' }, via('203.0.113.7'))).status).toBe(401);
    // Someone else behind the same proxy signs in at once; the guesser's next attempt waits.
    const right = await postSignIn(hearth.baseUrl, { name: adult.person.name, passphrase: adult.passphrase }, via('203.0.113.8'));
    expect(right.status).toBe(200);
    expect(clock.nextTimer()).toBeUndefined();
    const guessing = postSignIn(hearth.baseUrl, { name: 'nobody 4', passphrase: 'a guess' }, via('203.0.113.7'));
    await waitUntil(() => clock.nextTimer() === '2026-11-28T12:00:01.000Z');
    clock.advanceTo(new Date('2026-11-28T12:00:01.000Z'));
    expect((await guessing).status).toBe(401);
    const failures = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'sign-in failed');
    expect(failures.map((line) => line.address)).toEqual(['203.0.113.7', '203.0.113.7', '203.0.113.7', '203.0.113.7']);
  });
});

describe('POST /auth/sign-out', () => {
  it('makes the cookie useless and clears it', async () => {
    const hearth = await start();
    const { people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    expect((await adult.request('GET', '/me')).status).toBe(200);
    const response = await fetch(`${hearth.baseUrl}/auth/sign-out`, { method: 'POST', headers: adult.cookieHeaders });
    expect(await response.json()).toEqual({ ended: 1 });
    expect(response.headers.getSetCookie()[0]!.split('; ')).toEqual(expect.arrayContaining([`${signInCookie}=`, 'Max-Age=0', 'HttpOnly', 'SameSite=Strict']));
    const after = await adult.request('GET', '/me');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
  });

  it('with everywhere ends every sign-in of that person and nobody else\'s', async () => {
    const hearth = await start();
    const { owner, people } = await household(hearth, ['adult'] as const);
    const [adult] = people;
    const second = await postSignIn(hearth.baseUrl, { name: adult.person.name, passphrase: adult.passphrase });
    const secondCookie = { cookie: second.cookies[0]!.split(';')[0]! };
    expect((await hearth.request('GET', '/me', undefined, secondCookie)).status).toBe(200);
    const response = await adult.request('POST', '/auth/sign-out', { everywhere: true });
    expect(response.body).toEqual({ ended: 2 });
    expect((await hearth.request('GET', '/me', undefined, secondCookie)).status).toBe(401);
    expect((await adult.request('GET', '/me')).status).toBe(401);
    expect((await owner.request('GET', '/me')).status).toBe(200);
    // A personal token is not a sign-in: it lasts until it is revoked.
    expect((await adult.request('GET', '/me', undefined, adult.tokenHeaders)).status).toBe(200);
  });
});

describe('the one-person path', () => {
  it('needs no credentials on loopback while the owner is alone, and asks for them once a second person exists', async () => {
    const hearth = await start();
    const alone = await hearth.request('GET', '/me');
    expect(alone.status).toBe(200);
    expect(alone.body).toMatchObject({ name: 'Owner', role: 'owner', has_passphrase: false, via: 'loopback' });

    const early = await hearth.request('POST', '/people', { name: 'Sam', role: 'adult', passphrase: 'passphrase of Sam' });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('passphrase_needed');

    const response = await fetch(`${hearth.baseUrl}/me`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ passphrase: 'the owner chose this' }) });
    expect(response.status).toBe(200);
    const ownerCookie = { cookie: `${signInCookie}=${sessionFrom(response.headers.getSetCookie())}` };
    expect((await hearth.request('GET', '/sessions')).status).toBe(200);

    const added = await hearth.request('POST', '/people', { name: 'Sam', role: 'adult', passphrase: 'passphrase of Sam' });
    expect(added.status).toBe(201);
    const refused = await hearth.request('GET', '/sessions');
    expect(refused.status).toBe(401);
    expect(refused.body.error).toEqual({ code: 'unauthorized', message: expect.stringContaining('POST /auth/sign-in'), sign_in: ['passphrase', 'passkey', 'api_token'] });
    const me = await hearth.request('GET', '/me', undefined, ownerCookie);
    expect(me.body).toMatchObject({ name: 'Owner', via: 'sign_in' });
  });
});
