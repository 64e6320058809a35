// MCP (docs/integrations.md, "MCP servers"): the MCP servers of MCP_CONFIG_FILE as tool sources, with real servers as child
// processes: parallel connects that never wait, failures reported, list_changed, live edits of the
// file, stops that cancel in the server, and no process left after close().
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IntegrationRegistry, type IntegrationStatus } from '../src/integrations/integration-registry.ts';
import { McpServers, type McpServersOptions } from '../src/tools/mcp/mcp-servers.ts';
import { ToolRegistry } from '../src/tools/tool-registry.ts';
import {
  everythingStdio,
  exitsAtStart,
  filesystemStdio,
  fixtureServer,
  hangsAtInitialize,
  missingCommand,
  readFixtureLog,
  startEverythingHttp,
  startRecordingProxy,
  writeMcpConfig,
  type McpEntry,
} from './support/mcp-servers.ts';
import { processHasEnded } from './support/processes.ts';
import { runTool } from './support/tool-context.ts';
import { waitUntil } from './support/wait-until.ts';

let folder: string;
let dataDir: string;
let configFile: string;
let registry: ToolRegistry;
let integrations: IntegrationRegistry;
let running: McpServers | undefined;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-mcp-servers-'));
  dataDir = path.join(folder, 'data');
  await mkdir(dataDir);
  configFile = path.join(folder, 'mcp.json');
  registry = new ToolRegistry();
  integrations = new IntegrationRegistry();
});
afterEach(async () => {
  await running?.close();
  running = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await rm(folder, { recursive: true, force: true });
});

async function startServers(servers: Record<string, McpEntry> | undefined, options: Partial<McpServersOptions> = {}): Promise<McpServers> {
  if (servers) await writeMcpConfig(configFile, servers);
  running = new McpServers({
    configFile,
    dataDir,
    registry,
    integrations,
    logger: pino({ level: 'silent' }),
    toolTimeoutMs: 30_000,
    watch: false,
    backoff: { firstMs: 100, longestMs: 2_000 },
    ...options,
  });
  await running.start();
  return running;
}

/** Resolves once `mcp:<server>`'s status satisfies `holds`, on the registry's own events. */
function status(server: string, holds: (status: IntegrationStatus) => boolean, timeoutMs = 15_000): Promise<IntegrationStatus> {
  const name = `mcp:${server}`;
  const current = integrations.get(name);
  if (current && holds(current)) return Promise.resolve(current);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      integrations.off('changed', check);
      reject(new Error(`${name} not reached within ${timeoutMs} ms: ${JSON.stringify(integrations.get(name))}`));
    }, timeoutMs);
    function check(changed: IntegrationStatus): void {
      if (changed.name !== name || !holds(changed)) return;
      clearTimeout(timer);
      integrations.off('changed', check);
      resolve(changed);
    }
    integrations.on('changed', check);
  });
}

const connected = (server: string) => status(server, (current) => current.status === 'connected');
const failed = (server: string) => status(server, (current) => current.status === 'failed');

function tool(name: string) {
  const registered = registry.get(name);
  if (!registered) throw new Error(`no tool ${name}; the registry has ${registry.list().map((entry) => entry.name).join(', ')}`);
  return registered.tool;
}

describe('starting', () => {
  it('lists and calls the tools of server-everything and server-filesystem, each a source of its own', async () => {
    const root = path.join(folder, 'files');
    await mkdir(root);
    await writeFile(path.join(root, 'shopping.txt'), 'milk\n');
    const servers = await startServers({ everything: everythingStdio(), files: filesystemStdio(root) });
    await Promise.all([connected('everything'), connected('files')]);

    expect(registry.get('everything__echo')).toMatchObject({ source: 'mcp', origin: 'mcp:everything' });
    expect(registry.get('files__read_text_file')).toMatchObject({ source: 'mcp', origin: 'mcp:files' });
    expect(registry.forNames(['mcp:files'], { userTools: false }).map((entry) => entry.name)).toContain('files__list_directory');
    expect(await runTool(tool('everything__echo'), { message: 'hi' })).toMatchObject({ success: true, output: 'Echo: hi' });
    expect((await runTool(tool('files__list_directory'), { path: root })).output).toContain('shopping.txt');

    const [everything, files] = servers.servers();
    expect(everything).toMatchObject({ name: 'everything', transport: 'stdio', status: 'connected' });
    expect(everything!.tools).toContain('everything__get-sum');
    expect(files).toMatchObject({ name: 'files', transport: 'stdio', status: 'connected' });
    expect(integrations.get('mcp:files')).toEqual({ name: 'mcp:files', status: 'connected', details: { transport: 'stdio', tools: files!.tools.length, unjailed: true } });
    expect(servers.errors()).toEqual([]);
  });

  it('a server that is not found, one that exits at start and one that hangs fail with clear messages; start() waits for none and a good server connects', async () => {
    const servers = await startServers(
      {
        ghost: missingCommand(),
        weather: exitsAtStart(),
        stuck: hangsAtInitialize(),
        good: fixtureServer(),
        broken: { command: 'node', args: 'server.js' } as unknown as McpEntry,
      },
      { initializeTimeoutMs: 1_500 },
    );
    // start() has resolved while the servers are still on their way.
    expect(integrations.get('mcp:stuck')?.status).toBe('connecting');
    expect(integrations.get('mcp:good')?.status).toBe('connecting');

    await connected('good');
    expect(integrations.get('mcp:stuck')?.status).toBe('connecting');
    expect(await runTool(tool('good__echo'), { text: 'works' })).toMatchObject({ success: true, output: 'works' });

    await Promise.all([failed('ghost'), failed('weather'), failed('stuck')]);
    expect(integrations.get('mcp:ghost')).toEqual({ name: 'mcp:ghost', status: 'failed', message: 'command not found: hearth-test-no-such-command', details: { transport: 'stdio', tools: 0, unjailed: true } });
    expect(servers.errors()).toEqual([
      { file: 'mcp.json', server: 'broken', message: '"args" must be a list, not "server.js"' },
      { file: 'mcp.json', server: 'ghost', message: 'command not found: hearth-test-no-such-command' },
      { file: 'mcp.json', server: 'weather', message: 'exited at start with code 1: Error: WEATHER_API_KEY is not set' },
      { file: 'mcp.json', server: 'stuck', message: 'did not answer initialize within 1.5 s' },
    ]);
    expect(servers.servers().map(({ name, status }) => [name, status])).toEqual([
      ['ghost', 'failed'],
      ['weather', 'failed'],
      ['stuck', 'failed'],
      ['good', 'connected'],
    ]);
  });

  it('a missing file means no servers; with watching, the file written later adds them', async () => {
    const servers = await startServers(undefined, { watch: true });
    expect(servers.servers()).toEqual([]);
    expect(servers.errors()).toEqual([]);
    await writeMcpConfig(configFile, { fixture: fixtureServer() });
    await connected('fixture');
    expect(registry.get('fixture__pid')).toBeDefined();
  });
});

describe('calls', () => {
  it('a stop of server-everything\'s long-running operation returns within 1 s, and the server receives notifications/cancelled', async () => {
    const server = await startEverythingHttp();
    const proxy = await startRecordingProxy(server.url);
    cleanups.push(() => proxy.close(), () => server.close());
    await startServers({ remote: { url: proxy.url } });
    await connected('remote');
    expect(integrations.get('mcp:remote')?.details.transport).toBe('http');

    const stop = new AbortController();
    const result = runTool(tool('remote__trigger-long-running-operation'), { duration: 30, steps: 30 }, { signal: stop.signal });
    const request = await waitUntil(() => proxy.received.find((message) => message.method === 'tools/call'));
    const stoppedAt = performance.now();
    stop.abort();
    expect(await result).toMatchObject({ success: false });
    expect(performance.now() - stoppedAt).toBeLessThan(1_000);
    const cancelled = await waitUntil(() => proxy.received.find((message) => message.method === 'notifications/cancelled'));
    expect(cancelled.params?.requestId).toBe(request.id);
  });

  it('MCP_TOOL_TIMEOUT_MS reaches the SDK: a call past it fails and the server is told to cancel', async () => {
    const log = path.join(folder, 'fixture.log');
    await startServers({ fixture: fixtureServer({ log }) }, { toolTimeoutMs: 300 });
    await connected('fixture');
    const result = await runTool(tool('fixture__sleep'), { ms: 30_000 });
    expect(result.success).toBe(false);
    expect(result.output).toContain('timed out');
    await waitUntil(async () => (await readFixtureLog(log)).some((entry) => entry.method === 'notifications/cancelled'));
  });
});

describe('the tool list', () => {
  it('list_changed replaces the server\'s tools in the registry', async () => {
    await startServers({ fixture: fixtureServer() });
    await connected('fixture');
    const changes: string[] = [];
    registry.on('changed', (source) => changes.push(source));

    await runTool(tool('fixture__add_tool'), { name: 'late' });
    await waitUntil(() => registry.get('fixture__late'));
    expect(changes).toContain('mcp:fixture');
    expect(integrations.get('mcp:fixture')?.details.tools).toBe(11);
    expect(await runTool(tool('fixture__late'), {})).toMatchObject({ success: true, output: 'I am late' });

    await runTool(tool('fixture__remove_tool'), { name: 'late' });
    await waitUntil(() => registry.get('fixture__late') === undefined);
  });

  it('a server that crashes is failed with its exit, loses its tools, and comes back with backoff', async () => {
    await startServers({ fixture: fixtureServer() });
    await connected('fixture');
    const pid = running!.pid('fixture')!;
    const crashed = failed('fixture');
    await runTool(tool('fixture__crash'), { code: 7 });
    expect(await crashed).toMatchObject({ message: 'exited with code 7: crashing on purpose with code 7', details: { tools: 0 } });
    expect(registry.get('fixture__echo')).toBeUndefined();
    expect(running!.errors()).toEqual([{ file: 'mcp.json', server: 'fixture', message: 'exited with code 7: crashing on purpose with code 7' }]);

    await connected('fixture');
    expect(running!.pid('fixture')).not.toBe(pid);
    expect(await runTool(tool('fixture__echo'), { text: 'back' })).toMatchObject({ success: true, output: 'back' });
    expect(running!.errors()).toEqual([]);
  });
});

describe('editing the file', () => {
  it('reconnects only the server that changed, adds a new one and removes a deleted one', async () => {
    const servers = await startServers({ steady: fixtureServer(), changing: fixtureServer() }, { watch: true });
    await Promise.all([connected('steady'), connected('changing')]);
    const steadyPid = servers.pid('steady')!;
    const changingPid = servers.pid('changing')!;

    await writeMcpConfig(configFile, { steady: fixtureServer(), changing: fixtureServer({ env: { MODE: 'new' } }), added: fixtureServer() });
    await connected('added');
    await waitUntil(() => servers.pid('changing') !== undefined && servers.pid('changing') !== changingPid);
    await connected('changing');
    expect(servers.pid('steady')).toBe(steadyPid);
    expect(processHasEnded(changingPid)).toBe(true);
    const environment = JSON.parse((await runTool(tool('changing__env'), {})).output) as Record<string, string>;
    expect(environment.MODE).toBe('new');

    const removed = status('changing', (current) => current.status === 'removed');
    const changedPid = servers.pid('changing')!;
    await writeMcpConfig(configFile, { steady: fixtureServer(), added: fixtureServer() });
    await removed;
    expect(integrations.get('mcp:changing')).toBeUndefined();
    expect(registry.get('changing__echo')).toBeUndefined();
    expect(servers.servers().map((server) => server.name)).toEqual(['steady', 'added']);
    await waitUntil(() => processHasEnded(changedPid));
    expect(servers.pid('steady')).toBe(steadyPid);
  });

  it('a malformed edit keeps the running servers and reports the error; a bad entry keeps its server\'s last good settings', async () => {
    const servers = await startServers({ first: fixtureServer(), second: fixtureServer() }, { watch: true });
    await Promise.all([connected('first'), connected('second')]);
    const pids = [servers.pid('first'), servers.pid('second')];

    await writeFile(configFile, '{ "mcpServers": { "first": ');
    await waitUntil(() => servers.errors().length > 0);
    expect(servers.errors()).toEqual([{ file: 'mcp.json', message: expect.stringMatching(/^not valid JSON/) }]);
    expect([servers.pid('first'), servers.pid('second')]).toEqual(pids);
    expect(registry.get('second__echo')).toBeDefined();

    await writeFile(configFile, JSON.stringify({ mcpServers: { first: fixtureServer(), second: { command: 42 } } }));
    await waitUntil(() => servers.errors().some((error) => error.server === 'second'));
    expect(servers.errors()).toEqual([{ file: 'mcp.json', server: 'second', message: '"command" must be text, not the number 42' }]);
    expect([servers.pid('first'), servers.pid('second')]).toEqual(pids);

    await writeMcpConfig(configFile, { first: fixtureServer(), second: fixtureServer() });
    await waitUntil(() => servers.errors().length === 0);
    expect([servers.pid('first'), servers.pid('second')]).toEqual(pids);
  });
});

describe('closing', () => {
  it('close() leaves no process: connected servers, what they started, and a server still connecting', async () => {
    const server = await startEverythingHttp();
    cleanups.push(() => server.close());
    const servers = await startServers({ everything: everythingStdio(), fixture: fixtureServer(), stuck: hangsAtInitialize(), remote: server.entry }, { initializeTimeoutMs: 30_000 });
    await Promise.all([connected('everything'), connected('fixture'), connected('remote')]);
    const grandchild = Number((await runTool(tool('fixture__spawn_child'), {})).output);
    const pids = [servers.pid('everything')!, servers.pid('fixture')!, await waitUntil(() => servers.pid('stuck')), grandchild];
    expect(pids.every((pid) => !processHasEnded(pid))).toBe(true);
    expect(integrations.get('mcp:stuck')?.status).toBe('connecting');

    await servers.close();
    for (const pid of pids) expect(processHasEnded(pid), `pid ${pid}`).toBe(true);
  });

  it('close() right after start(), before any server has answered', async () => {
    const servers = await startServers({ a: everythingStdio(), b: fixtureServer(), c: hangsAtInitialize() });
    const pids = await waitUntil(() => {
      const all = ['a', 'b', 'c'].map((name) => servers.pid(name));
      return all.every((pid) => pid !== undefined) && (all as number[]);
    });
    await servers.close();
    for (const pid of pids) expect(processHasEnded(pid), `pid ${pid}`).toBe(true);
  });
});
