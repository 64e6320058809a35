// MCP (docs/integrations.md, "MCP servers"): one MCP server's connection through the official SDK client, against real servers
// (the reference servers from npm and a fixture built with the SDK's McpServer) as child processes.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as realDelay } from 'node:timers/promises';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { McpConnection, mcpProcessMarker, type McpBackoff } from '../src/tools/mcp/mcp-connection.ts';
import { processMarkerVariable } from '../src/tools/process-markers.ts';
import {
  everythingStdio,
  exitsAtStart,
  filesystemStdio,
  fixtureServer,
  hangsAtInitialize,
  missingCommand,
  readFixtureLog,
  serverConfig,
  startEverythingHttp,
  startRecordingProxy,
  type McpEntry,
} from './support/mcp-servers.ts';
import { processHasEnded } from './support/processes.ts';
import { waitUntil } from './support/wait-until.ts';

let dataDir: string;
const connections: McpConnection[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-mcp-connection-'));
});
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await rm(dataDir, { recursive: true, force: true });
});

function open(name: string, entry: McpEntry, options: { initializeTimeoutMs?: number; backoff?: McpBackoff } = {}): McpConnection {
  const connection = new McpConnection({ config: serverConfig(name, entry, dataDir), processMarker: mcpProcessMarker(dataDir, name), ...options });
  connections.push(connection);
  connection.start();
  return connection;
}

/** Resolves at the first `changed` (or at once) after which `holds` is true. */
function until(connection: McpConnection, holds: (connection: McpConnection) => boolean, timeoutMs = 15_000): Promise<void> {
  if (holds(connection)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      connection.off('changed', check);
      reject(new Error(`not reached within ${timeoutMs} ms; state ${connection.state}, message ${connection.message}`));
    }, timeoutMs);
    function check(): void {
      if (!holds(connection)) return;
      clearTimeout(timer);
      connection.off('changed', check);
      resolve();
    }
    connection.on('changed', check);
  });
}

const connected = (connection: McpConnection) => until(connection, (current) => current.state === 'connected');
const failed = (connection: McpConnection) => until(connection, (current) => current.state === 'failed');

function call(connection: McpConnection, name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<CallToolResult> {
  return connection.callTool(name, args, { signal: options.signal ?? new AbortController().signal, timeoutMs: options.timeoutMs ?? 30_000 });
}

function textOf(result: CallToolResult): string {
  return result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

const toolNames = (connection: McpConnection) => connection.tools.map((tool) => tool.name);

describe('the reference servers', () => {
  it('connects to server-everything over stdio, lists its tools and calls one', async () => {
    const connection = open('everything', everythingStdio());
    expect(connection.state).toBe('connecting');
    await connected(connection);
    expect(toolNames(connection)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-env', 'trigger-long-running-operation']));
    // It also has a tool that only runs as a task; Hearth calls tools directly, so it is left out.
    expect(toolNames(connection)).not.toContain('simulate-research-query');
    expect(textOf(await call(connection, 'echo', { message: 'hello' }))).toBe('Echo: hello');
    expect(textOf(await call(connection, 'get-sum', { a: 2, b: 3 }))).toContain('5');
  });

  it('connects to server-filesystem over stdio, rooted in a folder, and lists that folder', async () => {
    const root = path.join(dataDir, 'files');
    await mkdir(root);
    await writeFile(path.join(root, 'notes.txt'), 'milk, eggs\n');
    const connection = open('files', filesystemStdio(root));
    await connected(connection);
    expect(toolNames(connection)).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']));
    expect(textOf(await call(connection, 'list_directory', { path: root }))).toContain('notes.txt');
    expect(textOf(await call(connection, 'read_text_file', { path: path.join(root, 'notes.txt') }))).toContain('milk, eggs');
  });

  it('connects to server-everything over Streamable HTTP', async () => {
    const server = await startEverythingHttp();
    cleanups.push(() => server.close());
    const connection = open('everything_http', server.entry);
    await connected(connection);
    expect(toolNames(connection)).toContain('echo');
    expect(textOf(await call(connection, 'echo', { message: 'over http' }))).toBe('Echo: over http');
    expect(connection.pid).toBeUndefined();
  });
});

describe('Streamable HTTP settings', () => {
  it('sends the configured headers with every request', async () => {
    const server = await startEverythingHttp();
    const proxy = await startRecordingProxy(server.url);
    cleanups.push(() => proxy.close(), () => server.close());
    const connection = open('remote', { url: proxy.url, headers: { Authorization: 'Bearer t0ken' } });
    await connected(connection);
    await call(connection, 'echo', { message: 'with a token' });
    expect(proxy.headers.length).toBeGreaterThanOrEqual(3);
    expect(proxy.headers.every((headers) => headers.authorization === 'Bearer t0ken')).toBe(true);
  });
});

describe('stopping a call', () => {
  it('aborting server-everything\'s long-running operation returns within 1 s and the server receives notifications/cancelled on the wire', async () => {
    const server = await startEverythingHttp();
    const proxy = await startRecordingProxy(server.url);
    cleanups.push(() => proxy.close(), () => server.close());
    const connection = open('everything_http', { url: proxy.url });
    await connected(connection);

    const stop = new AbortController();
    const running = call(connection, 'trigger-long-running-operation', { duration: 30, steps: 30 }, { signal: stop.signal });
    const request = await waitUntil(() => proxy.received.find((message) => message.method === 'tools/call'));
    const stoppedAt = performance.now();
    stop.abort();
    await expect(running).rejects.toThrow();
    expect(performance.now() - stoppedAt).toBeLessThan(1_000);

    const cancelled = await waitUntil(() => proxy.received.find((message) => message.method === 'notifications/cancelled'));
    expect(cancelled.params?.requestId).toBe(request.id);
  });

  it('aborting a call over stdio cancels it in the server: its handler sees the abort', async () => {
    const log = path.join(dataDir, 'fixture.log');
    const connection = open('fixture', fixtureServer({ log }));
    await connected(connection);

    const stop = new AbortController();
    const running = call(connection, 'sleep', { ms: 30_000 }, { signal: stop.signal });
    const sleeping = await waitUntil(async () => (await readFixtureLog(log)).find((entry) => entry.event === 'sleeping'));
    const stoppedAt = performance.now();
    stop.abort();
    await expect(running).rejects.toThrow();
    expect(performance.now() - stoppedAt).toBeLessThan(1_000);

    const entries = await waitUntil(async () => {
      const all = await readFixtureLog(log);
      return all.some((entry) => entry.event === 'aborted') && all;
    });
    const cancelled = entries.find((entry) => entry.method === 'notifications/cancelled');
    expect(cancelled?.params?.requestId).toBe(sleeping.requestId);
    expect(entries.find((entry) => entry.event === 'aborted')?.requestId).toBe(sleeping.requestId);
    // The connection stays usable.
    expect(textOf(await call(connection, 'echo', { text: 'still here' }))).toBe('still here');
  });

  it('an abort of the caller\'s signal after the call answered cancels nothing (its timeout fires after every call)', async () => {
    const log = path.join(dataDir, 'fixture.log');
    const connection = open('fixture', fixtureServer({ log }));
    await connected(connection);
    const caller = new AbortController();
    expect(textOf(await call(connection, 'echo', { text: 'answered' }, { signal: caller.signal }))).toBe('answered');
    caller.abort();
    // Stdio keeps order: a cancellation sent on the abort would reach the server before this call.
    expect(textOf(await call(connection, 'echo', { text: 'next' }))).toBe('next');
    const entries = await waitUntil(async () => {
      const all = await readFixtureLog(log);
      return all.filter((entry) => entry.method === 'tools/call').length === 2 && all;
    });
    expect(entries.filter((entry) => entry.method === 'notifications/cancelled')).toEqual([]);
  });

  it('a call that passes its timeout is rejected as a timeout and cancelled in the server', async () => {
    const log = path.join(dataDir, 'fixture.log');
    const connection = open('fixture', fixtureServer({ log }));
    await connected(connection);
    const error = await call(connection, 'sleep', { ms: 30_000 }, { timeoutMs: 300 }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
    await waitUntil(async () => (await readFixtureLog(log)).some((entry) => entry.method === 'notifications/cancelled'));
  });
});

describe('servers that fail', () => {
  it('a command that does not exist', async () => {
    const connection = open('ghost', missingCommand());
    await failed(connection);
    expect(connection.message).toBe('command not found: hearth-test-no-such-command');
    expect(connection.tools).toEqual([]);
  });

  it('a server that exits at start, with the end of what it printed', async () => {
    const connection = open('weather', exitsAtStart());
    await failed(connection);
    expect(connection.message).toBe('exited at start with code 1: Error: WEATHER_API_KEY is not set');
  });

  it('a server that never answers initialize fails after the timeout and is ended', async () => {
    const connection = open('stuck', hangsAtInitialize(), { initializeTimeoutMs: 500 });
    const pid = await waitUntil(() => connection.pid);
    await failed(connection);
    expect(connection.message).toBe('did not answer initialize within 0.5 s');
    await waitUntil(() => processHasEnded(pid));
  });

  it('by default, waits 10 s for the answer to initialize', async () => {
    // Only the timers are fake: the server is a real process that never answers.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const connection = open('stuck', hangsAtInitialize());
      // The SDK sets the initialize request's timer as it sends the request. (vi.waitUntil would move the fake clock.)
      while (vi.getTimerCount() === 0) await new Promise((resolve) => setImmediate(resolve));
      const pid = connection.pid!;
      expect(pid).toBeGreaterThan(0);
      await vi.advanceTimersByTimeAsync(9_999);
      expect(connection.state).toBe('connecting');
      await vi.advanceTimersByTimeAsync(1);
      expect(connection.state).toBe('failed');
      expect(connection.message).toBe('did not answer initialize within 10 s');
      vi.useRealTimers();
      await connection.close();
      expect(processHasEnded(pid)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives a server that ran out of time starting twice as long at each next attempt, up to four times', async () => {
    // A slow machine (npx on a Raspberry Pi, a busy one) must not fail the same way forever.
    const connection = open('slow', hangsAtInitialize(), { initializeTimeoutMs: 100, backoff: { firstMs: 10, longestMs: 10 } });
    const messages: string[] = [];
    connection.on('changed', () => {
      if (connection.state === 'failed') messages.push(connection.message!);
    });
    await until(connection, () => messages.length >= 4);
    expect(messages.slice(0, 4)).toEqual([
      'did not answer initialize within 0.1 s',
      'did not answer initialize within 0.2 s',
      'did not answer initialize within 0.4 s',
      'did not answer initialize within 0.4 s',
    ]);
  });

  it('by default, tries again after 1 s, doubling to a minute', async () => {
    // Only the timers are fake: each attempt really starts a process, and fails.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let failures = 0;
      let failed: () => void = () => {};
      const connection = new McpConnection({ config: serverConfig('ghost', missingCommand(), dataDir), processMarker: mcpProcessMarker(dataDir, 'ghost') });
      connections.push(connection);
      connection.on('changed', () => {
        if (connection.state !== 'failed') return;
        failures += 1;
        failed();
      });
      const nextFailure = () => new Promise<void>((resolve) => (failed = resolve));
      let next = nextFailure();
      const startedAt = performance.now();
      connection.start();
      await next;
      const attemptMs = performance.now() - startedAt;
      for (const waitMs of [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]) {
        const before = failures;
        next = nextFailure();
        await vi.advanceTimersByTimeAsync(waitMs - 1);
        // Long enough, in real time, for an attempt made too early to have failed.
        await realDelay(Math.max(50, 2 * attemptMs));
        expect(failures, `an attempt before ${waitMs} ms`).toBe(before);
        await vi.advanceTimersByTimeAsync(1);
        await next;
        expect(failures).toBe(before + 1);
      }
      expect(connection.message).toBe('command not found: hearth-test-no-such-command');
    } finally {
      vi.useRealTimers();
    }
  });

  it('a working folder that does not exist', async () => {
    const connection = open('elsewhere', { ...everythingStdio(), cwd: 'no-such-folder' });
    await failed(connection);
    expect(connection.message).toBe(`its working folder (cwd) does not exist: ${path.join(dataDir, 'no-such-folder')}`);
  });

  it('an HTTP endpoint nobody listens on', async () => {
    const server = await startEverythingHttp();
    const url = server.url;
    await server.close();
    const connection = open('gone', { url: `${url}?key=secret` });
    await failed(connection);
    expect(connection.message).toBe(`cannot reach ${url}: connection refused (is the server running?)`);
  });

  it('a call to a server that is not connected says so', async () => {
    const connection = open('ghost', missingCommand());
    await failed(connection);
    await expect(call(connection, 'anything')).rejects.toThrow('The MCP server ghost is not connected: command not found: hearth-test-no-such-command.');
  });
});

describe('the server\'s process', () => {
  it('gets a safe environment: none of Hearth\'s secrets, its own env and the process marker', async () => {
    const saved = { AUTH_TOKEN: process.env.AUTH_TOKEN, OPENAI_API_KEY: process.env.OPENAI_API_KEY };
    process.env.AUTH_TOKEN = 'hearth-secret-token';
    process.env.OPENAI_API_KEY = 'sk-hearth-secret';
    try {
      const marker = mcpProcessMarker(dataDir, 'everything');
      const connection = new McpConnection({ config: serverConfig('everything', { ...everythingStdio(), env: { WEATHER_CITY: 'Berlin' } }, dataDir), processMarker: marker });
      connections.push(connection);
      connection.start();
      await connected(connection);
      const environment = JSON.parse(textOf(await call(connection, 'get-env'))) as Record<string, string>;
      expect(environment.AUTH_TOKEN).toBeUndefined();
      expect(environment.OPENAI_API_KEY).toBeUndefined();
      expect(environment.WEATHER_CITY).toBe('Berlin');
      expect(environment[processMarkerVariable]).toBe(marker);
      expect(environment.PATH).toBe(process.env.PATH);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('close() ends the server and what it started in a session of its own', async () => {
    const connection = open('fixture', fixtureServer());
    await connected(connection);
    const pid = connection.pid!;
    const grandchild = Number(textOf(await call(connection, 'spawn_child')));
    expect(processHasEnded(grandchild)).toBe(false);
    await connection.close();
    expect(processHasEnded(pid)).toBe(true);
    expect(processHasEnded(grandchild)).toBe(true);
  });

  it('close() while the server is still starting ends it', async () => {
    const connection = open('stuck', hangsAtInitialize(), { initializeTimeoutMs: 30_000 });
    const pid = await waitUntil(() => connection.pid);
    await connection.close();
    expect(processHasEnded(pid)).toBe(true);
    expect(connection.state).toBe('connecting');
  });
});

describe('the tool list', () => {
  it('follows notifications/tools/list_changed', async () => {
    const connection = open('fixture', fixtureServer());
    await connected(connection);
    expect(toolNames(connection)).not.toContain('late');
    await call(connection, 'add_tool', { name: 'late' });
    await until(connection, (current) => toolNames(current).includes('late'));
    expect(textOf(await call(connection, 'late'))).toBe('I am late');
    await call(connection, 'remove_tool', { name: 'late' });
    await until(connection, (current) => !toolNames(current).includes('late'));
  });

  it('follows the pages of tools/list', async () => {
    const connection = open('paged', fixtureServer({ pageSize: 2 }));
    await connected(connection);
    expect(toolNames(connection).sort()).toEqual(['add_tool', 'crash', 'echo', 'env', 'pid', 'probe', 'remove_tool', 'run_attached', 'sleep', 'spawn_child']);
  });
});

describe('a dropped connection', () => {
  it('a crash is reported with its exit and reconnected, a new process', async () => {
    const connection = open('fixture', fixtureServer(), { backoff: { firstMs: 100, longestMs: 10_000 } });
    await connected(connection);
    const first = connection.pid!;
    const dropped = failed(connection);
    await expect(call(connection, 'crash', { code: 7 })).rejects.toThrow();
    await dropped;
    expect(connection.message).toBe('exited with code 7: crashing on purpose with code 7');
    expect(connection.tools).toEqual([]);
    await connected(connection);
    expect(connection.pid).not.toBe(first);
    expect(processHasEnded(first)).toBe(true);
    expect(textOf(await call(connection, 'echo', { text: 'back' }))).toBe('back');
  });

  it('an HTTP server that goes away is failed, and connected again once it is back', async () => {
    const first = await startEverythingHttp();
    const port = Number(new URL(first.url).port);
    const connection = open('remote', first.entry, { backoff: { firstMs: 100, longestMs: 1_000 } });
    await connected(connection);
    await first.close();
    await failed(connection);
    expect(connection.message).toBe(`lost the connection to ${first.url}`);
    expect(connection.tools).toEqual([]);
    await until(connection, (current) => current.message?.startsWith('cannot reach') === true);
    expect(connection.message).toBe(`cannot reach ${first.url}: connection refused (is the server running?)`);

    const second = await startEverythingHttp({ port });
    cleanups.push(() => second.close());
    await connected(connection);
    expect(textOf(await call(connection, 'echo', { message: 'again' }))).toBe('Echo: again');
  });

  it('a server that keeps crashing is retried after waits that double', async () => {
    // The doubling itself, to the minute, on exact timers: 'by default, tries again after 1 s, doubling to a minute'.
    const connection = open('flaky', fixtureServer({ crashAfterMs: 200 }), { backoff: { firstMs: 50, longestMs: 10_000 } });
    const moments: { state: string; at: number }[] = [];
    connection.on('changed', () => {
      const last = moments.at(-1);
      if (last?.state !== connection.state) moments.push({ state: connection.state, at: performance.now() });
    });
    await until(connection, () => moments.filter((moment) => moment.state === 'connected').length >= 4);
    await connection.close();
    // Each wait runs from a failure to the next connection, which also takes the server's start.
    const waits = moments.flatMap((moment, index) => (moment.state === 'connected' && index > 0 ? [moment.at - moments[index - 1]!.at] : []));
    expect(waits.length).toBeGreaterThanOrEqual(3);
    expect(waits[0]).toBeGreaterThanOrEqual(50);
    expect(waits[1]).toBeGreaterThanOrEqual(100);
    expect(waits[2]).toBeGreaterThanOrEqual(200);
  });
});
