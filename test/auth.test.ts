import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Hearth, useHearth } from './support/hearth-server.ts';

const token = 'secret';
const bearer = { authorization: `Bearer ${token}` };
const hasWebClient = existsSync('public/index.html');

const start = useHearth();

async function startGuarded(): Promise<Hearth> {
  return start({ env: { AUTH_TOKEN: token } });
}

/** Creates a session on a guarded server, presenting the token. */
async function createSession(server: Hearth): Promise<string> {
  const { status, body } = await server.request('POST', '/sessions', {}, bearer);
  expect(status).toBe(201);
  return body.session_id as string;
}

function expectUnauthorized(response: { status: number; body: any }): void {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('AUTH_TOKEN'), sign_in: ['api_token', 'auth_token'] } });
}

describe('with AUTH_TOKEN, REST', () => {
  it('refuses a request without the token with 401 unauthorized', async () => {
    const server = await startGuarded();
    expectUnauthorized(await server.request('GET', '/sessions'));
    expectUnauthorized(await server.request('POST', '/sessions', {}));
    expectUnauthorized(await server.request('GET', '/health'));
  });

  it('accepts the token as a Bearer header', async () => {
    const server = await startGuarded();
    expect(await server.request('GET', '/sessions', undefined, bearer)).toEqual({ status: 200, body: [] });
  });

  it('accepts the token as a cookie, among other cookies', async () => {
    const server = await startGuarded();
    expect((await server.request('GET', '/sessions', undefined, { cookie: `token=${token}` })).status).toBe(200);
    expect((await server.request('GET', '/sessions', undefined, { cookie: `theme=dark; token=${token}; lang=en` })).status).toBe(200);
  });

  it('refuses a wrong token in the header or the cookie', async () => {
    const server = await startGuarded();
    expectUnauthorized(await server.request('GET', '/sessions', undefined, { authorization: 'Bearer secrets' }));
    expectUnauthorized(await server.request('GET', '/sessions', undefined, { authorization: `Basic ${token}` }));
    expectUnauthorized(await server.request('GET', '/sessions', undefined, { cookie: 'token=public' }));
  });

  it('does not accept ?token= on a plain REST request', async () => {
    const server = await startGuarded();
    expectUnauthorized(await server.request('GET', `/sessions?token=${token}`));
  });

  it('does not run a refused request', async () => {
    const server = await startGuarded();
    const sessionId = await createSession(server);
    expectUnauthorized(await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' }));
    expectUnauthorized(await server.request('DELETE', `/sessions/${sessionId}`));
    expect(server.llm.requests).toEqual([]);
    expect((await server.request('GET', `/sessions/${sessionId}`, undefined, bearer)).body.messages).toEqual([]);
  });
});

describe('with AUTH_TOKEN, WebSocket', () => {
  it('refuses a socket without the token with HTTP 401', async () => {
    const server = await startGuarded();
    const sessionId = await createSession(server);
    await expect(server.connect(sessionId)).rejects.toThrow('HTTP 401');
  });

  it('refuses a socket with a wrong ?token=', async () => {
    const server = await startGuarded();
    const sessionId = await createSession(server);
    await expect(server.connect(sessionId, '?token=public')).rejects.toThrow('HTTP 401');
  });

  it('accepts ?token= on the WebSocket URL', async () => {
    const server = await startGuarded();
    const sessionId = await createSession(server);
    const socket = await server.connect(sessionId, `?token=${token}`);
    expect(await socket.next('session_sync')).toEqual({ type: 'session_sync', running: false });
    socket.close();
  });

  it('accepts the token cookie on the WebSocket upgrade', async () => {
    const server = await startGuarded();
    const sessionId = await createSession(server);
    const socket = await server.connect(sessionId, '', { cookie: `token=${token}` });
    expect(await socket.next('session_sync')).toEqual({ type: 'session_sync', running: false });
    socket.close();
  });

  it('runs a turn over an authorised socket', async () => {
    const server = await startGuarded();
    server.llm.script({ content: 'Hello back.' });
    const sessionId = await createSession(server);
    const socket = await server.connect(sessionId, `?token=${token}`);
    await socket.next('session_sync');
    socket.send({ type: 'message', content: 'Hello' });
    expect((await socket.next('stream_end')).content).toBe('Hello back.');
    socket.close();
  });
});

describe('with AUTH_TOKEN, static files', () => {
  it.skipIf(!hasWebClient)('serves the web page without the token', async () => {
    const server = await startGuarded();
    const response = await fetch(`${server.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
  });
});

describe('without AUTH_TOKEN', () => {
  it('serves REST without any token', async () => {
    const hearth = await start();
    expect((await hearth.request('GET', '/health')).status).toBe(200);
    expect((await hearth.request('POST', '/sessions', {})).status).toBe(201);
    expect((await hearth.request('GET', '/sessions')).status).toBe(200);
  });

  it('opens sockets without any token', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    expect(await socket.next('session_sync')).toEqual({ type: 'session_sync', running: false });
    socket.close();
  });
});
