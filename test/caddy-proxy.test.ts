import { afterEach, describe, expect, it } from 'vitest';
import { caddyAvailable, caddyRequired, startCaddy, type Caddy } from './support/caddy.ts';
import { useHearth } from './support/hearth-server.ts';
import { httpsClient, type HttpsClient } from './support/https-client.ts';

// docs/operations.md, HTTPS for the phone: Debian's Caddy in front of a loopback Hearth, its
// certificate from Caddy's internal authority, which the client trusts. CI sets
// HEARTH_REQUIRE_CADDY=1, so there a missing Caddy fails these tests instead of skipping them.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = useHearth();
const token = 'token-of-the-proxy-recipe';

async function behindCaddy(): Promise<{ caddy: Caddy; client: HttpsClient; hearth: Awaited<ReturnType<typeof start>> }> {
  // The recipe's Hearth: loopback only, with AUTH_TOKEN, since everything Caddy forwards comes from loopback.
  const hearth = await start({ env: { AUTH_TOKEN: token } });
  const caddy = await startCaddy(`127.0.0.1:${new URL(hearth.baseUrl).port}`);
  cleanups.push(() => caddy.close());
  const client = httpsClient(caddy.url, caddy.rootPem);
  cleanups.push(() => client.close());
  return { caddy, client, hearth };
}

describe.skipIf(!caddyAvailable && !caddyRequired)('Hearth behind Caddy (tls internal)', () => {
  it('serves the page, /health, both sockets and a streamed answer over HTTPS', async () => {
    const { client, hearth } = await behindCaddy();
    const bearer = { authorization: `Bearer ${token}` };
    const page = await client.request('GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>');
    expect(page.headers.get('via') ?? page.headers.get('server')).toMatch(/Caddy/i);
    expect(await client.request('GET', '/health', undefined, bearer)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await client.request('GET', '/health')).status).toBe(401);

    const events = await client.socket(`/ws/events?token=${token}`);
    expect(await events.nextMatching((event) => (event as { type: string }).type === 'hello', 'hello')).toMatchObject({ type: 'hello' });

    const created = await client.request('POST', '/sessions', {}, bearer);
    expect(created.status).toBe(201);
    const socket = await client.socket(`/ws/sessions/${created.body.session_id}?token=${token}`);
    await socket.next('session_sync');
    hearth.llm.script({ chunks: ['Through ', 'the ', 'proxy.'] });
    socket.send({ type: 'message', content: 'Hello from the phone' });
    expect((await socket.next('stream_delta')).delta).toBe('Through ');
    expect((await socket.next('stream_end')).content).toBe('Through the proxy.');
    expect(socket.ofType('stream_delta').map((event) => event.delta).join('')).toBe('Through the proxy.');
    socket.close();
    events.close();
  });

  it("marks the sign-in cookie Secure from the proxy's X-Forwarded-Proto", async () => {
    const { client, hearth } = await behindCaddy();
    const owner = await hearth.deps.household.firstOwner();
    const passphrase = 'passphrase of the owner';
    expect((await hearth.deps.accounts.people.update(owner.id, { passphrase })).ok).toBe(true);
    const response = await client.request('POST', '/auth/sign-in', { name: owner.name, passphrase });
    expect(response.status).toBe(200);
    expect((response.headers.get('set-cookie') ?? '').split('; ')).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Secure']));
  });
});
