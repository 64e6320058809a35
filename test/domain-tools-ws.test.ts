import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';

let site: Server | undefined;
afterEach(async () => {
  site?.close();
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const start = useHearth();

async function startSite(): Promise<string> {
  site = createServer((request, response) => {
    if (request.url === '/api/state') return response.writeHead(200, { 'content-type': 'application/json' }).end('{"light":"on"}');
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<html><head><title>Tea notes</title><script>var secret = 1;</script></head><body><nav>Home | About</nav><article><h1>Tea notes</h1><p>Green tea is steamed or pan-fired soon after picking, which keeps it from oxidising.</p><p>Black tea is fully oxidised before drying.</p></article></body></html>');
  });
  await new Promise<void>((resolve) => site!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
}

describe('domain tools through the WebSocket protocol', () => {
  it('runs terminal (once the person allows it), filesystem, code_exec, http_request and web_view in one turn of the server_admin profile', async () => {
    const base = await startSite();
    const hearth = await start();
    hearth.llm.script(
      {
        toolCalls: [
          { name: 'terminal', arguments: { command: 'echo hello > greeting.txt && cat greeting.txt' } },
          { name: 'filesystem', arguments: { action: 'read', path: 'greeting.txt' } },
          { name: 'code_exec', arguments: { language: 'javascript', code: 'console.log(6 * 7)' } },
          { name: 'http_request', arguments: { method: 'GET', url: `${base}/api/state` } },
          { name: 'web_view', arguments: { url: `${base}/page` } },
        ],
      },
      { content: 'All checked.' },
    );
    const socket = await hearth.connect(await hearth.createSession('server_admin'));
    // The person names the addresses: once the first answer is read, a request to one named nowhere would be asked (docs/security.md: Untrusted content).
    socket.send({ type: 'message', content: `Check everything, ${base}/api/state and ${base}/page too` });
    // A command with a redirect and a chain is not read-only: the shipped profile asks first.
    const asked = await socket.next('approval_required');
    expect(asked).toMatchObject({ tool: 'terminal', subject: 'echo hello > greeting.txt && cat greeting.txt' });
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'allow' });
    expect((await socket.next('stream_end')).content).toBe('All checked.');
    expect(socket.ofType('approval_required')).toHaveLength(1);
    const results = Object.fromEntries(socket.ofType('tool_call').map((event) => [event.tool, event]));
    expect(Object.values(results).map((event) => event.success)).toEqual([true, true, true, true, true]);
    expect(results['terminal']!.result).toContain('hello');
    expect(results['filesystem']!.result).toContain('hello');
    expect(results['code_exec']!.result).toContain('42');
    expect(results['http_request']!.result).toMatch(/200[\s\S]*"light": "on"/);
    expect(results['web_view']!.result).toContain('Green tea is steamed');
    expect(results['web_view']!.result).not.toContain('secret');
    expect(results['web_view']!.result).not.toContain('Home | About');
  });
});
