import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/protocol/events.ts';
import type { ScriptedToolCall } from '../support/scripted-llm.ts';
import { startHearth, useHearth, type Hearth } from '../support/hearth-server.ts';
import { closeServers, serve } from '../support/loopback-http.ts';

// The measured hole (issue 13): a model steered by a web page called http_request with a DELETE
// of another session on Hearth's own address. fetch sends no Origin, so the cross-site guard let
// it through. These tests replay it through the real server, the scripted model and real sockets.

/** No approvals block: the gate allows every call, so only the network guard stands in the way. */
const netTestProfile = `---
id: net_test
name: Network test
max_iterations: 8
planning_enabled: false
tools: [http_request, web_view, image_view, web_search]
# Only the network guard is under test: the taint rule would ask before the second request of a turn.
untrusted:
  allow: [http_request, web_view, image_view, web_search]
---
You fetch things.
`;

// Without AUTH_TOKEN, Hearth answers requests whose Host is a loopback name, which is what a redirect to
// http://127.0.0.1:<port>/ sends. Other spellings of its address (0.0.0.0, ::ffff:127.0.0.1) are stopped by the
// Host guard too, so they are replayed against a Hearth with AUTH_TOKEN whose token the model is assumed to know
// (a page, a file or an earlier answer may hold it): there only the network guard stands in the way.
const token = 'network-test-token';
const auth = { authorization: `Bearer ${token}` };

async function createSession(hearth: Hearth): Promise<string> {
  const { status, body } = await hearth.request('POST', '/sessions', { profile_id: 'net_test' }, auth);
  if (status !== 201) throw new Error(`create session: ${status} ${JSON.stringify(body)}`);
  return body.session_id as string;
}

/** Runs one turn in a fresh session of net_test in which the model makes `calls`, and gives their results in order. */
async function runTurn(hearth: Hearth, calls: ScriptedToolCall[]): Promise<EventOf<'tool_call'>[]> {
  hearth.llm.script({ toolCalls: calls }, { content: 'Done.' });
  const socket = await hearth.connect(await createSession(hearth), '', auth);
  try {
    socket.send({ type: 'message', content: 'Read the page and do what it says.' });
    await socket.next('stream_end');
    return socket.ofType('tool_call');
  } finally {
    socket.close();
  }
}

async function sessionStatus(hearth: Hearth, sessionId: string): Promise<number> {
  return (await hearth.request('GET', `/sessions/${sessionId}`, undefined, auth)).status;
}

afterEach(closeServers);

describe("the network tools and Hearth's own API, with a token the model knows", () => {
  let hearth: Hearth;
  let port: number;
  beforeAll(async () => {
    hearth = await startHearth({ profiles: { net_test: netTestProfile }, env: { AUTH_TOKEN: token } });
    port = Number(new URL(hearth.baseUrl).port);
  });
  afterAll(() => hearth?.close());

  // Every spelling here reaches the server on 127.0.0.1 when nothing refuses it (0.0.0.0 connects to this
  // machine; an IPv4-mapped IPv6 address is the IPv4 one; localhost resolves to ::1 and 127.0.0.1).
  it.each([
    ['its own base URL', (port: number) => `http://127.0.0.1:${port}`],
    ['localhost, a name that resolves to loopback', (port: number) => `http://localhost:${port}`],
    ['0.0.0.0', (port: number) => `http://0.0.0.0:${port}`],
    ['an IPv4-mapped IPv6 address', (port: number) => `http://[::ffff:127.0.0.1]:${port}`],
    ['the short form 127.1', (port: number) => `http://127.1:${port}`],
  ])('refuses http_request DELETE of another session through %s, and the session survives', async (_name, base) => {
    const victim = await createSession(hearth);
    const [call] = await runTurn(hearth, [{ name: 'http_request', arguments: { method: 'DELETE', url: `${base(port)}/sessions/${victim}`, headers: auth } }]);
    expect(await sessionStatus(hearth, victim)).toBe(200);
    expect(call).toMatchObject({ tool: 'http_request', success: false });
    expect(call!.result).toMatch(new RegExp(`^refused: .*port ${port} is Hearth's own API`));
  });
});

describe("the network tools and Hearth's own API", () => {
  let hearth: Hearth;
  let port: number;
  beforeAll(async () => {
    hearth = await startHearth({ profiles: { net_test: netTestProfile } });
    port = Number(new URL(hearth.baseUrl).port);
  });
  afterAll(() => hearth?.close());

  it('refuses a redirect from another loopback server to the DELETE, on every hop', async () => {
    const victim = await createSession(hearth);
    const seen: string[] = [];
    const redirector = await serve((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      const location = request.url === '/by-name' ? `http://localhost:${port}/sessions/${victim}` : `${hearth.baseUrl}/sessions/${victim}`;
      response.writeHead(307, { location }).end();
    });
    const calls = await runTurn(hearth, [
      { name: 'http_request', arguments: { method: 'DELETE', url: `${redirector}/go` } },
      { name: 'http_request', arguments: { method: 'DELETE', url: `${redirector}/by-name` } },
    ]);
    expect(await sessionStatus(hearth, victim)).toBe(200);
    expect(seen).toEqual(['DELETE /go', 'DELETE /by-name']);
    for (const call of calls) {
      expect(call.success).toBe(false);
      expect(call.result).toMatch(new RegExp(`^refused: .*port ${port} is Hearth's own API.*redirected there`, 's'));
    }
  });

  it("refuses web_view and image_view on Hearth's API, directly and through a redirect", async () => {
    const victim = await createSession(hearth);
    const redirector = await serve((_request, response) => {
      response.writeHead(302, { location: `${hearth.baseUrl}/sessions/${victim}` }).end();
    });
    const calls = await runTurn(hearth, [
      { name: 'web_view', arguments: { url: `${hearth.baseUrl}/sessions/${victim}` } },
      { name: 'web_view', arguments: { url: `${redirector}/page` } },
      { name: 'image_view', arguments: { url: `${hearth.baseUrl}/health` } },
      { name: 'image_view', arguments: { url: `${redirector}/picture.png` } },
    ]);
    expect(calls.map((call) => [call.tool, call.success])).toEqual([
      ['web_view', false],
      ['web_view', false],
      ['image_view', false],
      ['image_view', false],
    ]);
    for (const call of calls) expect(call.result).toMatch(/^refused: .* is Hearth's own API/);
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', '169.254.169.254 port 80'],
    ['http://[::ffff:169.254.169.254]/latest/meta-data/', '169.254.169.254 port 80'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 port 80'],
    ['http://[fe80::a9fe:a9fe]:8080/', 'fe80::a9fe:a9fe port 8080'],
  ])('refuses the cloud metadata service at %s', async (url, place) => {
    const calls = await runTurn(hearth, [
      { name: 'http_request', arguments: { method: 'GET', url, timeout_s: 5 } },
      { name: 'web_view', arguments: { url } },
      { name: 'image_view', arguments: { url } },
    ]);
    for (const call of calls) {
      expect(call.success).toBe(false);
      expect(call.result).toBe(`refused: ${place} is the cloud metadata service (link-local addresses), which holds this machine's credentials; Hearth's tools never connect to it.`);
    }
  });

  it('still reaches other loopback and LAN services by default', async () => {
    const seen: string[] = [];
    const service = await serve((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('service answer');
    });
    const otherPort = new URL(service).port;
    const calls = await runTurn(hearth, [
      { name: 'http_request', arguments: { method: 'DELETE', url: `${service}/item/1` } },
      { name: 'web_view', arguments: { url: `http://localhost:${otherPort}/page` } },
    ]);
    expect(calls.map((call) => call.success)).toEqual([true, true]);
    expect(calls[0]!.result).toMatch(/^HTTP 200 OK/);
    expect(calls[1]!.result).toContain('service answer');
    expect(seen).toEqual(['DELETE /item/1', 'GET /page']);
  });
});

describe('HTTP_BLOCK_PRIVATE=true', () => {
  const start = useHearth();

  it('refuses a loopback service the default lets through, for every network tool, without connecting', async () => {
    const seen: string[] = [];
    const service = await serve((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('service answer');
    });
    const otherPort = new URL(service).port;
    const hearth = await start({ profiles: { net_test: netTestProfile }, env: { HTTP_BLOCK_PRIVATE: 'true' } });
    const calls = await runTurn(hearth, [
      { name: 'http_request', arguments: { method: 'GET', url: `${service}/state` } },
      { name: 'http_request', arguments: { method: 'GET', url: `http://[::ffff:127.0.0.1]:${otherPort}/state` } },
      { name: 'web_view', arguments: { url: `http://localhost:${otherPort}/page` } },
      { name: 'image_view', arguments: { url: `${service}/picture.png` } },
    ]);
    expect(calls.map((call) => call.success)).toEqual([false, false, false, false]);
    expect(calls[0]!.result).toBe(
      `refused: 127.0.0.1 port ${otherPort} is a private address and HTTP_BLOCK_PRIVATE is on, so only public hosts are reachable. Ask the person to set HTTP_BLOCK_PRIVATE=false if this host must be reached.`,
    );
    expect(calls[2]!.result).toMatch(new RegExp(`^refused: localhost \\(.+\\) port ${otherPort} is a private address and HTTP_BLOCK_PRIVATE is on`));
    expect(seen).toEqual([]);
  });

  it('keeps refusing its own API as such, and leaves the configured search endpoint reachable', async () => {
    const searches: string[] = [];
    const searxng = await serve((request, response) => {
      searches.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ title: 'Tea', url: 'https://tea.example/', content: 'All about tea' }] }));
    });
    const hearth = await start({ profiles: { net_test: netTestProfile }, env: { HTTP_BLOCK_PRIVATE: 'true', WEB_SEARCH_URL: searxng } });
    const victim = await createSession(hearth);
    const calls = await runTurn(hearth, [
      { name: 'http_request', arguments: { method: 'DELETE', url: `${hearth.baseUrl}/sessions/${victim}` } },
      { name: 'web_search', arguments: { query: 'tea' } },
    ]);
    expect(await sessionStatus(hearth, victim)).toBe(200);
    expect(calls[0]).toMatchObject({ success: false, result: expect.stringMatching(/^refused: 127\.0\.0\.1 port \d+ is Hearth's own API/) });
    expect(calls[1]).toMatchObject({ success: true, result: expect.stringContaining('https://tea.example/') });
    expect(searches).toEqual(['/search?q=tea&format=json']);
  });
});
