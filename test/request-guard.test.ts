import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { listSessionIds } from '../src/store/sessions-repository.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';

const start = useHearth();

/** A raw HTTP request with exactly these headers (fetch will not send a Host of our choosing). */
function rawRequest(server: Hearth, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  const { port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Every stored session, empty ones too (GET /sessions lists a session from its first message on). */
const sessionCount = async (server: Hearth) => (await listSessionIds(server.deps.db)).length;

describe('requests a browser may be tricked into sending', () => {
  it('refuses another site\'s Origin on REST, before anything is done', async () => {
    const hearth = await start();
    const host = new URL(hearth.baseUrl).host;
    const json = { 'content-type': 'application/json', host };
    const refused = await rawRequest(hearth, 'POST', '/sessions', { ...json, origin: 'https://evil.example' }, '{}');
    expect(refused).toEqual({ status: 403, body: { error: { code: 'forbidden_origin', message: expect.stringContaining('https://evil.example') } } });
    expect(await sessionCount(hearth)).toBe(0);

    // The page's own origin, and clients that send no Origin at all (curl, scripts), are served.
    expect((await rawRequest(hearth, 'POST', '/sessions', { ...json, origin: hearth.baseUrl }, '{}')).status).toBe(201);
    expect((await rawRequest(hearth, 'POST', '/sessions', json, '{}')).status).toBe(201);
    expect(await sessionCount(hearth)).toBe(2);
  });

  it('refuses a cross-site WebSocket and accepts the page\'s own', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    await expect(hearth.connect(sessionId, '', { origin: 'http://evil.example' })).rejects.toThrow('HTTP 403');
    const socket = await hearth.connect(sessionId, '', { origin: hearth.baseUrl });
    expect(await socket.next('session_sync')).toEqual({ type: 'session_sync', running: false });
    socket.close();
  });

  it('answers only to loopback host names without AUTH_TOKEN, so DNS rebinding reaches nothing', async () => {
    const hearth = await start();
    const { port } = new URL(hearth.baseUrl);
    const rebound = await rawRequest(hearth, 'GET', '/sessions', { host: `rebound.evil.example:${port}` });
    expect(rebound).toEqual({ status: 403, body: { error: { code: 'forbidden_host', message: expect.stringContaining('AUTH_TOKEN') } } });
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST']) {
      expect((await rawRequest(hearth, 'GET', '/health', { host })).status, host).toBe(200);
    }
  });

  it('answers to any host name once AUTH_TOKEN guards it', async () => {
    const hearth = await start({ env: { AUTH_TOKEN: 'secret' } });
    const host = 'hearth.home.example';
    expect((await rawRequest(hearth, 'GET', '/health', { host })).status).toBe(401);
    expect((await rawRequest(hearth, 'GET', '/health', { host, authorization: 'Bearer secret' })).status).toBe(200);
    // A foreign origin is refused even with the token: a page elsewhere may hold the cookie.
    expect((await rawRequest(hearth, 'GET', '/health', { host, authorization: 'Bearer secret', origin: 'https://evil.example' })).status).toBe(403);
  });
});
