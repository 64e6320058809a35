import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpRequestTool } from '../src/tools/builtin/http-request.ts';
import type { ToolContext } from '../src/tools/tool.ts';
import { unusedPort } from './support/llm-helpers.ts';
import { closeServers, serve } from './support/loopback-http.ts';
import { runTool } from './support/tool-context.ts';

afterEach(closeServers);

const tool = createHttpRequestTool();

function request(args: Record<string, unknown>, overrides?: Partial<ToolContext>) {
  return runTool(tool, args, overrides);
}

describe('http_request', () => {
  it('GETs JSON, pretty-prints it and sends the given headers', async () => {
    let seenToken: string | undefined;
    const base = await serve((incoming, response) => {
      seenToken = incoming.headers['x-token'] as string;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ name: 'lamp', on: true }));
    });
    const result = await request({ method: 'GET', url: `${base}/devices/1`, headers: { 'X-Token': 'secret' } });
    expect(result.success).toBe(true);
    expect(seenToken).toBe('secret');
    expect(result.output).toMatch(/^HTTP 200 OK\ncontent-type: application\/json\ncontent-length: \d+\n\n/);
    expect(result.output).toContain('{\n  "name": "lamp",\n  "on": true\n}');
  });

  it('POSTs an object as JSON with its content type', async () => {
    let received: { method?: string; type?: string; body?: string } = {};
    const base = await serve((incoming, response, body) => {
      received = { method: incoming.method, type: incoming.headers['content-type'], body };
      response.writeHead(201, { 'content-type': 'application/json', location: '/items/7' });
      response.end('{"id":7}');
    });
    const result = await request({ method: 'POST', url: `${base}/items`, body: { title: 'milk', count: 2 } });
    expect(received).toEqual({ method: 'POST', type: 'application/json', body: '{"title":"milk","count":2}' });
    expect(result.output).toContain('HTTP 201 Created');
    expect(result.output).toContain('location: /items/7');
    expect(result.output).toContain('{\n  "id": 7\n}');
  });

  it('returns a text body as is and reports redirects', async () => {
    const base = await serve((incoming, response) => {
      if (incoming.url === '/old') {
        response.writeHead(302, { location: '/new' }).end();
        return;
      }
      response.setHeader('content-type', 'text/plain; charset=utf-8');
      response.end('  line one\n  line two\n');
    });
    const result = await request({ method: 'GET', url: `${base}/old` });
    expect(result.output).toContain(`redirected to: ${base}/new`);
    expect(result.output.endsWith('\n\n  line one\n  line two\n')).toBe(true);
  });

  it('reports a 404 as a successful call carrying the status', async () => {
    const base = await serve((_incoming, response) => {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no such device');
    });
    const result = await request({ method: 'DELETE', url: `${base}/devices/9` });
    expect(result.success).toBe(true);
    expect(result.output).toMatch(/^HTTP 404 Not Found/);
    expect(result.output).toContain('no such device');
    expect(result.metadata).toEqual({ status: 404 });
  });

  it('truncates a long body with a note', async () => {
    const base = await serve((_incoming, response) => {
      response.setHeader('content-type', 'text/plain');
      response.end('x'.repeat(50_000));
    });
    const result = await request({ method: 'GET', url: base });
    expect(result.output).toContain('[truncated: showing 20000 of 50000 characters');
    expect(result.output.length).toBeLessThan(21_000);
  });

  it('stops reading an endless body at the size cap', async () => {
    const base = await serve((_incoming, response) => {
      response.setHeader('content-type', 'text/plain');
      const chunk = 'y'.repeat(64 * 1024);
      const write = () => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on('drain', write);
      write();
    });
    const result = await request({ method: 'GET', url: base });
    expect(result.success).toBe(true);
    expect(result.output).toContain('of 5242880 characters; reading stopped after 5.0 MB');
  });

  it('describes a binary body instead of dumping it', async () => {
    const base = await serve((_incoming, response) => {
      response.setHeader('content-type', 'image/png');
      response.end(Buffer.alloc(3000, 0x89));
    });
    const result = await request({ method: 'GET', url: `${base}/picture.png` });
    expect(result.success).toBe(true);
    expect(result.output).toContain('(binary body: image/png, 2.9 KB; not shown)');
  });

  it('reports a refused connection as the host and port being unreachable', async () => {
    const port = await unusedPort();
    const result = await request({ method: 'GET', url: `http://127.0.0.1:${port}/` });
    expect(result.success).toBe(false);
    expect(result.output).toMatch(new RegExp(`^127\\.0\\.0\\.1 port ${port} is unreachable: the connection was refused`));
    // localhost tries ::1 and 127.0.0.1; both refusals still name the host and port.
    const named = await request({ method: 'GET', url: `http://localhost:${port}/` });
    expect(named.output).toMatch(new RegExp(`^localhost \\(.+\\) port ${port} is unreachable: the connection was refused`));
    expect(named.output).not.toContain('fetch failed');
  });

  it('gives the approval subject as <METHOD> <url>', () => {
    expect(tool.subject?.({ method: 'DELETE', url: 'http://127.0.0.1:8000/sessions/abc' })).toBe('DELETE http://127.0.0.1:8000/sessions/abc');
  });

  it('fails on a bad URL and on a GET with a body', async () => {
    expect(await request({ method: 'GET', url: 'ftp://example.com/file' })).toMatchObject({ success: false, output: expect.stringContaining('not an absolute http(s) URL') });
    expect(await request({ method: 'GET', url: 'http://127.0.0.1/', body: 'x' })).toMatchObject({ success: false, output: expect.stringContaining('cannot have a body') });
  });

  it('times out on a server that never answers', async () => {
    const base = await serve(() => {});
    const result = await request({ method: 'GET', url: base, timeout_s: 1 });
    expect(result.success).toBe(false);
    expect(result.output).toContain('No complete response');
    expect(result.output).toContain('timeout_s');
  });

  it('aborts on the context signal and closes the request', async () => {
    const controller = new AbortController();
    let closed: Promise<unknown> | undefined;
    const base = await serve((_incoming, response) => {
      closed = once(response, 'close');
      controller.abort();
    });
    const result = await request({ method: 'GET', url: base }, { signal: controller.signal });
    expect(result).toMatchObject({ success: false, output: expect.stringContaining('was cancelled') });
    await closed;
  });
});
