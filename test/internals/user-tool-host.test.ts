// UserToolHost over an in-memory transport: the protocol side of a user-tool host (loading and
// leaving out a module that hangs, calls, timeouts, stops, a host that dies, retirement and the
// KV relay) with the test playing the host process. test/user-tool-host.test.ts runs real
// processes through the whole server.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { openDatabase } from '../../src/store/database.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import type { KvOperation, ServerToHost } from '../../src/tools/user-tools/protocol.ts';
import { stopGraceMs, UserToolHost, type HostOptions } from '../../src/tools/user-tools/user-tool-host.ts';
import { UserToolManager } from '../../src/tools/user-tools/user-tool-manager.ts';
import { InMemoryHost, loadsEverything, manifestEntryOf, moduleNamed } from '../support/in-memory-host.ts';

afterEach(() => {
  vi.useRealTimers();
});

interface Started {
  host: UserToolHost;
  /** Every host process started, in order. */
  children: InMemoryHost[];
  kvCalls: { tool: string; operation: KvOperation }[];
}

/** Starts a UserToolHost whose processes are in memory, each scripted by `script` (by default it loads every module). */
async function startHost(
  options: Partial<HostOptions> & { script?: (child: InMemoryHost, index: number) => void } = {},
): Promise<Started> {
  const children: InMemoryHost[] = [];
  const kvCalls: Started['kvCalls'] = [];
  const { script = loadsEverything, ...rest } = options;
  const host = await UserToolHost.start({
    modules: [moduleNamed('ping')],
    kv: async (tool, operation) => {
      kvCalls.push({ tool, operation });
      return `value of ${tool}`;
    },
    loadTimeoutMs: 5_000,
    connect: (modules) => {
      const child = new InMemoryHost(modules, { pid: 4242, stderr: 'last words\n' });
      script(child, children.length);
      children.push(child);
      return child.transport;
    },
    ...rest,
  });
  return { host, children, kvCalls };
}

const callOptions = (overrides: { signal?: AbortSignal; timeoutMs?: number } = {}) => ({
  sessionId: 'session-1',
  signal: overrides.signal ?? new AbortController().signal,
  timeoutMs: overrides.timeoutMs ?? 5_000,
});

/** Resolves once what the in-memory host sent so far has reached the server. */
const crossed = () => new Promise((resolve) => setImmediate(resolve));

/** Resolves with the reason the next time `host` ends. */
const endOf = (host: UserToolHost) => new Promise<string>((resolve) => host.once('ended', resolve));

describe('UserToolHost: loading', () => {
  it('asks for its modules and reports the manifest: tools, load errors, pid and stderr', async () => {
    const modules = [moduleNamed('ping'), moduleNamed('broken')];
    const { host, children } = await startHost({
      modules,
      script: (child) => {
        child.answer = (message) => {
          if (message.type === 'load') {
            child.send({ type: 'manifest', tools: [manifestEntryOf(modules[0]!)], errors: [{ file: '/tools/broken.ts', message: 'it threw' }] });
          }
        };
      },
    });
    expect(children).toHaveLength(1);
    expect(children[0]!.received).toEqual([{ type: 'load', modules }]);
    expect(host.tools.map((tool) => tool.name)).toEqual(['ping']);
    expect(host.errors).toEqual([{ file: '/tools/broken.ts', message: 'it threw' }]);
    expect(host.moduleFailures).toEqual(host.errors);
    expect(host.ended).toBe(false);
    expect(host.pid).toBe(4242);
    expect(host.stderr).toBe('last words\n');
  });

  it('leaves out a module that hangs while loading and loads the others again in a new host', async () => {
    const modules = [moduleNamed('ping'), moduleNamed('hangs'), moduleNamed('pong')];
    const { host, children } = await startHost({
      modules,
      loadTimeoutMs: 50,
      script: (child, index) => {
        if (index === 0) {
          child.answer = (message) => {
            if (message.type === 'load') child.send({ type: 'loading', file: '/tools/hangs.ts' });
          };
        } else loadsEverything(child);
      },
    });
    expect(children).toHaveLength(2);
    expect(children[0]!.closed).toBe(true);
    expect(children[1]!.modules.map((module) => module.expectedName)).toEqual(['ping', 'pong']);
    expect(host.tools.map((tool) => tool.name)).toEqual(['ping', 'pong']);
    expect(host.errors).toEqual([{ file: '/tools/hangs.ts', message: 'Failed while loading: loading did not finish within 0.05 s (an endless loop at the top level?).' }]);
    expect(host.moduleFailures).toEqual(host.errors);
  });

  it('gives each module the whole load timeout, counted again from each one it starts', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const modules = [moduleNamed('first'), moduleNamed('second'), moduleNamed('third')];
    let first: InMemoryHost | undefined;
    const starting = startHost({ modules, loadTimeoutMs: 200, script: (child, index) => (index === 0 ? (first = child) : loadsEverything(child)) });
    const load = await first!.next('load');
    // Each module takes 150 ms: 450 ms in all, longer than one timeout, shorter than one per module.
    for (const module of load.modules) {
      first!.send({ type: 'loading', file: module.file });
      await crossed();
      vi.advanceTimersByTime(150);
    }
    first!.send({ type: 'manifest', tools: load.modules.map(manifestEntryOf), errors: [] });
    const { host, children } = await starting;
    expect(children).toHaveLength(1);
    expect(host.tools).toHaveLength(3);
    expect(host.errors).toEqual([]);
  });

  it("gives each module 10 s by default (docs/security.md): the manager's load timeout, named in the verdict", async () => {
    const db = await openDatabase(':memory:');
    const manager = new UserToolManager({
      toolsDir: path.join(tmpdir(), 'hearth-no-such-tools-dir'),
      db,
      source: new ToolRegistry().addSource('user', 'user'),
      timeoutMs: 10_000,
      logger: createLogger('silent'),
    });
    expect(manager.loadTimeoutMs).toBe(10_000);
    await manager.close();
    await db.destroy();

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const modules = [moduleNamed('hangs'), moduleNamed('ping')];
    const children: InMemoryHost[] = [];
    const starting = startHost({
      modules,
      loadTimeoutMs: manager.loadTimeoutMs,
      script: (child, index) => {
        children.push(child);
        if (index > 0) loadsEverything(child);
      },
    });
    await children[0]!.next('load');
    children[0]!.send({ type: 'loading', file: '/tools/hangs.ts' });
    await crossed();
    vi.advanceTimersByTime(9_999);
    await crossed();
    expect(children).toHaveLength(1);
    expect(children[0]!.closed).toBe(false);
    vi.advanceTimersByTime(1);
    const { host } = await starting;
    expect(children).toHaveLength(2);
    expect(host.tools.map((tool) => tool.name)).toEqual(['ping']);
    expect(host.errors).toEqual([{ file: '/tools/hangs.ts', message: 'Failed while loading: loading did not finish within 10 s (an endless loop at the top level?).' }]);
  });

  it('blames no module when the host dies before loading any, and ends', async () => {
    const modules = [moduleNamed('ping'), moduleNamed('pong')];
    const { host, children } = await startHost({
      modules,
      script: (child) => {
        child.answer = (message) => {
          if (message.type === 'load') child.exit({ reason: 'the tool host could not run: spawn ENOENT' });
        };
      },
    });
    expect(children).toHaveLength(1);
    expect(host.ended).toBe(true);
    expect(host.tools).toEqual([]);
    expect(host.errors).toEqual(modules.map((module) => ({ file: module.file, message: 'the tool host could not run: spawn ENOENT' })));
    expect(host.moduleFailures).toEqual([]);
    const result = await host.call('ping', {}, callOptions());
    expect(result).toEqual({ output: 'The tool host is not running (the tool host could not run: spawn ENOENT); try again.', success: false });
  });

  it('stops loading when its signal is aborted, blaming no module', async () => {
    const stop = new AbortController();
    const { host, children } = await startHost({
      signal: stop.signal,
      script: (child) => {
        child.answer = (message) => {
          if (message.type === 'load') {
            child.send({ type: 'loading', file: '/tools/ping.ts' });
            stop.abort();
          }
        };
      },
    });
    expect(children).toHaveLength(1);
    expect(children[0]!.closed).toBe(true);
    expect(host.ended).toBe(true);
    expect(host.errors).toEqual([{ file: '/tools/ping.ts', message: 'the server is shutting down' }]);
    expect(host.moduleFailures).toEqual([]);
  });
});

describe('UserToolHost: calls', () => {
  it('sends a call with its arguments and session and answers with the result the host sends', async () => {
    const { host, children } = await startHost();
    const child = children[0]!;
    const answered = host.call('ping', { text: 'hello' }, callOptions());
    expect(host.inFlight).toBe(1);
    const call = await child.next('call');
    expect(call).toEqual({ type: 'call', callId: call.callId, name: 'ping', args: { text: 'hello' }, sessionId: 'session-1' });
    child.send({ type: 'result', callId: call.callId, output: 'pong', success: true, metadata: { images: 1 } });
    expect(await answered).toEqual({ output: 'pong', success: true, metadata: { images: 1 } });
    expect(host.inFlight).toBe(0);
    expect(host.ended).toBe(false);
  });

  it('tells concurrent calls apart by their id, and keeps only object metadata', async () => {
    const { host, children } = await startHost();
    const child = children[0]!;
    const first = host.call('ping', { n: 1 }, callOptions());
    const second = host.call('ping', { n: 2 }, callOptions());
    const [firstCall, secondCall] = [await child.next('call'), await child.next('call')];
    expect(firstCall.callId).not.toBe(secondCall.callId);
    child.send({ type: 'result', callId: secondCall.callId, output: 'second', success: false, metadata: ['not', 'an', 'object'] as never });
    child.send({ type: 'result', callId: firstCall.callId, output: 'first', success: true });
    expect(await second).toEqual({ output: 'second', success: false });
    expect(await first).toEqual({ output: 'first', success: true });
  });

  it('ends the host when a call passes its timeout', async () => {
    const { host, children } = await startHost();
    const ended = endOf(host);
    const result = await host.call('ping', {}, callOptions({ timeoutMs: 50 }));
    expect(result).toEqual({ output: 'Error: ping timed out after 0.05 s and was ended with its host.', success: false });
    expect(await ended).toBe('ping timed out');
    expect(children[0]!.closed).toBe(true);
    expect(host.ended).toBe(true);
  });

  it('fails every running call with the reason when the host dies', async () => {
    const { host, children } = await startHost();
    const child = children[0]!;
    const ended = endOf(host);
    const calls = [host.call('ping', {}, callOptions()), host.call('ping', {}, callOptions())];
    await child.next('call');
    await child.next('call');
    child.exit({ reason: 'the tool host crashed: boom' });
    expect(await Promise.all(calls)).toEqual([
      { output: 'Error: ping did not finish: the tool host crashed: boom.', success: false },
      { output: 'Error: ping did not finish: the tool host crashed: boom.', success: false },
    ]);
    expect(await ended).toBe('the tool host crashed: boom');
    expect(await host.call('ping', {}, callOptions())).toEqual({ output: 'The tool host is not running (the tool host crashed: boom); try again.', success: false });
  });

  it('names the memory limit when the one running call is ended for it', async () => {
    const { host, children } = await startHost();
    const answered = host.call('hog', {}, callOptions());
    await children[0]!.next('call');
    children[0]!.exit({ reason: 'the tool host used more than 256 MB of memory', memory: { limitMb: 256 } });
    expect(await answered).toEqual({
      output: 'Error: hog used more than 256 MB of memory (USER_TOOL_MAX_RSS_MB) and was ended with its host.',
      success: false,
    });
  });

  it('passes a stop on to the host; a tool that returns keeps its host', async () => {
    const { host, children } = await startHost();
    const child = children[0]!;
    const stop = new AbortController();
    const answered = host.call('patient', {}, callOptions({ signal: stop.signal }));
    const call = await child.next('call');
    stop.abort();
    expect(await child.next('abort')).toEqual({ type: 'abort', callId: call.callId });
    child.send({ type: 'result', callId: call.callId, output: 'stopped', success: false });
    expect(await answered).toEqual({ output: 'stopped', success: false });
    expect(host.ended).toBe(false);
    expect(child.closed).toBe(false);
  });

  it(`ends the host when a stopped tool has not returned within ${stopGraceMs} ms`, async () => {
    const { host, children } = await startHost();
    const stop = new AbortController();
    stop.abort();
    const ended = endOf(host);
    const result = await host.call('stubborn', {}, callOptions({ signal: stop.signal }));
    expect(result).toEqual({ output: 'Stopped by the user; stubborn did not stop by itself and was ended with its host.', success: false });
    expect(children[0]!.ofType('abort')).toHaveLength(1);
    expect(await ended).toBe('stubborn ignored a stop');
    expect(children[0]!.closed).toBe(true);
  });
});

describe('UserToolHost: retirement', () => {
  it('lets a running call finish, then ends the host', async () => {
    const { host, children } = await startHost();
    const child = children[0]!;
    const answered = host.call('slow', {}, callOptions());
    const call = await child.next('call');
    const retired = host.retire(60_000); // far longer than the test may take: only the call ending can end the wait
    await crossed();
    expect(child.closed).toBe(false);
    child.send({ type: 'result', callId: call.callId, output: 'done', success: true });
    expect(await answered).toEqual({ output: 'done', success: true });
    await retired;
    expect(child.closed).toBe(true);
    expect(host.ended).toBe(true);
  });

  it('ends the host with the call still running once the wait is over', async () => {
    const { host, children } = await startHost();
    const answered = host.call('slow', {}, callOptions());
    await children[0]!.next('call');
    await host.retire(50);
    expect(children[0]!.closed).toBe(true);
    expect(await answered).toEqual({ output: 'Error: slow did not finish: the tool host was replaced by a reload.', success: false });
  });

  it('ends an idle host at once', async () => {
    const { host, children } = await startHost();
    await host.retire(60_000);
    expect(children[0]!.closed).toBe(true);
  });
});

describe('UserToolHost: the KV relay', () => {
  /** Sends a kv request from the host and gives the server's answer. */
  async function kvRequest(child: InMemoryHost, request: Record<string, unknown>): Promise<ServerToHost> {
    const answered = child.next('kv_result');
    child.send({ type: 'kv', ...request } as never);
    return answered;
  }

  it('relays each operation of a tool the host loaded to the store and answers with its value', async () => {
    const { children, kvCalls } = await startHost();
    const child = children[0]!;
    expect(await kvRequest(child, { requestId: 1, tool: 'ping', operation: 'set', key: 'colour', value: { deep: ['teal'] } })).toEqual({
      type: 'kv_result',
      requestId: 1,
      ok: true,
      value: 'value of ping',
    });
    await kvRequest(child, { requestId: 2, tool: 'ping', operation: 'get', key: 'colour' });
    await kvRequest(child, { requestId: 3, tool: 'ping', operation: 'delete', key: 'colour' });
    await kvRequest(child, { requestId: 4, tool: 'ping', operation: 'list' });
    await kvRequest(child, { requestId: 5, tool: 'ping', operation: 'list', prefix: 'col' });
    expect(kvCalls).toEqual([
      { tool: 'ping', operation: { operation: 'set', key: 'colour', value: { deep: ['teal'] } } },
      { tool: 'ping', operation: { operation: 'get', key: 'colour' } },
      { tool: 'ping', operation: { operation: 'delete', key: 'colour' } },
      { tool: 'ping', operation: { operation: 'list' } },
      { tool: 'ping', operation: { operation: 'list', prefix: 'col' } },
    ]);
  });

  it('refuses a request for a tool this host did not load, and a malformed one, without touching the store', async () => {
    const { children, kvCalls } = await startHost();
    const child = children[0]!;
    expect(await kvRequest(child, { requestId: 7, tool: 'someone_else', operation: 'get', key: 'secret' })).toEqual({
      type: 'kv_result',
      requestId: 7,
      ok: false,
      message: 'ctx.kv: no tool someone_else runs in this host',
    });
    for (const malformed of [
      { operation: 'get' },
      { operation: 'set', key: 42 },
      { operation: 'list', prefix: 7 },
      { operation: 'drop', key: 'colour' },
    ]) {
      expect(await kvRequest(child, { requestId: 8, tool: 'ping', ...malformed })).toEqual({
        type: 'kv_result',
        requestId: 8,
        ok: false,
        message: 'ctx.kv: malformed request',
      });
    }
    expect(kvCalls).toEqual([]);
  });

  it('answers with the message of a store that fails', async () => {
    const children: InMemoryHost[] = [];
    await UserToolHost.start({
      modules: [moduleNamed('ping')],
      kv: async () => {
        throw new Error('database is locked');
      },
      loadTimeoutMs: 5_000,
      connect: (modules) => {
        const child = new InMemoryHost(modules);
        loadsEverything(child);
        children.push(child);
        return child.transport;
      },
    });
    expect(await kvRequest(children[0]!, { requestId: 9, tool: 'ping', operation: 'get', key: 'colour' })).toEqual({
      type: 'kv_result',
      requestId: 9,
      ok: false,
      message: 'database is locked',
    });
  });
});
