// MCP servers through the whole server (issue 18; docs/integrations.md, "MCP servers"): mcp.json read and watched by
// the app, real reference servers from npm over stdio and Streamable HTTP, whole turns on both
// LLM backends, a stop that cancels the server's work, broken servers that delay nothing, and
// no child left behind after shutdown.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { EventSocket } from './support/event-socket.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import {
  everythingStdio,
  exitsAtStart,
  filesystemStdio,
  fixtureServer,
  hangsAtInitialize,
  missingCommand,
  startEverythingHttp,
  startRecordingProxy,
  writeMcpConfig,
  type McpEntry,
} from './support/mcp-servers.ts';
import { processHasEnded } from './support/processes.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { prepareProfiles, startChildServer } from './support/server-child.ts';
import { waitUntil } from './support/wait-until.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function profile(tools: string[], extra = ''): string {
  return `---\nid: mcp_user\nname: MCP user\nmax_iterations: 6\nplanning_enabled: false\ntools: [${tools.map((tool) => JSON.stringify(tool)).join(', ')}]\n${extra}---\nYou use MCP tools.\n`;
}

async function tempFolder(): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-mcp-turns-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

interface ServerSummary {
  name: string;
  transport: string;
  status: string;
  message?: string;
  tools: string[];
}

/** Hearth with `servers` in its mcp.json (written before it starts) and an events socket opened at once. */
async function startWithServers(servers: Record<string, McpEntry>, options: Parameters<typeof startHearth>[0] = {}) {
  const dataDir = await tempFolder();
  await writeMcpConfig(path.join(dataDir, 'mcp.json'), servers);
  const hearth = await startHearth({ ...options, dataDir });
  cleanups.push(() => hearth.close());
  const events = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`);
  cleanups.push(async () => events.close());
  return { hearth, events };
}

/** Resolves with GET /agents/tools's servers once `holds` is true of them, checking again on every integration_status. */
async function serversWhen(hearth: Hearth, events: EventSocket, holds: (servers: ServerSummary[]) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { servers } = (await hearth.request('GET', '/agents/tools')).body as { servers: ServerSummary[] };
    if (holds(servers)) return servers;
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`the MCP servers did not get there in ${timeoutMs} ms: ${JSON.stringify(servers)}`);
    await events.nextMatching((event) => (event.type as string) === 'integration_status', 'integration_status', left).catch(() => undefined);
  }
}

const allConnected = (count: number) => (servers: ServerSummary[]) => servers.length === count && servers.every((server) => server.status === 'connected');

describe('MCP servers in the app', () => {
  for (const backend of ['ollama', 'openai'] as const) {
    it(`runs a whole ${backend} turn through server-everything and server-filesystem tools, offering only what the profile names`, async () => {
      const root = await tempFolder();
      await writeFile(path.join(root, 'shopping.txt'), 'eggs, flour, butter');
      const { hearth, events } = await startWithServers(
        { everything: everythingStdio(), files: filesystemStdio(root) },
        { backend, profiles: { mcp_user: profile(['scratchpad', 'mcp:everything', 'files__read_text_file']) } },
      );
      await serversWhen(hearth, events, allConnected(2));

      hearth.llm.script(
        { toolCalls: [{ name: 'everything__echo', arguments: { message: 'hello from Hearth' } }] },
        { toolCalls: [{ name: 'files__read_text_file', arguments: { path: path.join(root, 'shopping.txt') } }] },
        { content: 'You need eggs, flour and butter.' },
      );
      const socket = await hearth.connect(await hearth.createSession('mcp_user'));
      socket.send({ type: 'message', content: 'What is on my shopping list?' });
      expect(await socket.next('stream_end')).toBeDefined();

      const calls = socket.ofType('tool_call');
      expect(calls.map(({ tool, success }) => [tool, success])).toEqual([
        ['everything__echo', true],
        ['files__read_text_file', true],
      ]);
      expect(calls[0]!.result).toBe('Echo: hello from Hearth');
      expect(calls[1]!.result).toContain('eggs, flour, butter');

      const offered = (hearth.llm.requests[0]!.body.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
      expect(offered).toContain('scratchpad');
      expect(offered).toContain('everything__echo');
      expect(offered).toContain('files__read_text_file');
      expect(offered).not.toContain('files__write_file'); // the profile did not name it
      // Each result went back to the model in the next request.
      expect(JSON.stringify(hearth.llm.requests[1]!.body.messages)).toContain('Echo: hello from Hearth');
      expect(JSON.stringify(hearth.llm.requests[2]!.body.messages)).toContain('eggs, flour, butter');
      socket.close();
    });
  }

  it('a stop ends a long-running MCP call within a second, and the server receives notifications/cancelled for it', async () => {
    const everything = await startEverythingHttp();
    cleanups.push(() => everything.close());
    const proxy = await startRecordingProxy(everything.url);
    cleanups.push(() => proxy.close());
    const { hearth, events } = await startWithServers({ slow: { url: proxy.url } }, { profiles: { mcp_user: profile(['mcp:slow']) } });
    await serversWhen(hearth, events, allConnected(1));

    hearth.llm.script({ toolCalls: [{ name: 'slow__trigger-long-running-operation', arguments: { duration: 60, steps: 60 } }] }, { content: 'never reached' });
    const sessionId = await hearth.createSession('mcp_user');
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Run the long operation' });
    await socket.next('tool_started');
    const request = await waitUntil(() => proxy.received.find((message) => message.method === 'tools/call'), 5_000);

    const stoppedAt = performance.now();
    socket.send({ type: 'stop' });
    const call = await socket.next('tool_call');
    await socket.next('stream_stopped');
    expect(performance.now() - stoppedAt).toBeLessThan(1_000);
    expect(call).toMatchObject({ tool: 'slow__trigger-long-running-operation', success: false });
    const cancelled = await waitUntil(() => proxy.received.find((message) => message.method === 'notifications/cancelled'), 5_000);
    expect(cancelled.params).toMatchObject({ requestId: request.id });
    socket.close();
  });

  it('asks before a tool the server marks destructive, with the path it writes, and a denial leaves no file', async () => {
    const root = await tempFolder();
    const { hearth, events } = await startWithServers({ files: filesystemStdio(root) }, { profiles: { mcp_user: profile(['mcp:files'], 'approvals:\n  default: allow\n  deny: [files__move_file]\n') } });
    await serversWhen(hearth, events, allConnected(1));
    const target = path.join(root, 'secret-plan.txt');
    hearth.llm.script(
      { toolCalls: [{ name: 'files__list_directory', arguments: { path: root } }, { name: 'files__write_file', arguments: { path: target, content: 'overwrite' } }] },
      { toolCalls: [{ name: 'files__move_file', arguments: { source: target, destination: path.join(root, 'moved.txt') } }] },
      { content: 'I could not write it.' },
    );
    const socket = await hearth.connect(await hearth.createSession('mcp_user'));
    socket.send({ type: 'message', content: 'Write the plan' });
    const asked = await socket.next('approval_required');
    expect(asked).toMatchObject({ tool: 'files__write_file', subject: `path=${target}` });
    expect(socket.ofType('tool_call').map(({ tool, success }) => [tool, success])).toEqual([['files__list_directory', true]]);
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'deny' });
    await socket.next('stream_end');

    const calls = socket.ofType('tool_call');
    expect(calls.map(({ tool, success }) => [tool, success])).toEqual([
      ['files__list_directory', true],
      ['files__write_file', false],
      ['files__move_file', false],
    ]);
    expect(calls[1]!.result).toMatch(/denied/i);
    expect(calls[2]!.result).toMatch(/^Refused by the rule files__move_file/);
    await expect(import('node:fs/promises').then(({ access }) => access(target))).rejects.toThrow();
    socket.close();
  });

  it('a missing command, a server that exits at start and one that hangs at initialize delay neither /health nor a good server, and are reported', async () => {
    const started = performance.now();
    const { hearth, events } = await startWithServers({
      absent: missingCommand(),
      crashing: exitsAtStart(),
      stuck: hangsAtInitialize(),
      everything: everythingStdio(),
    });
    expect((await hearth.request('GET', '/health')).status).toBe(200);
    // buildApp and listen did not wait for any of them (a hanging one alone takes 10 s to be given up).
    expect(performance.now() - started).toBeLessThan(8_000);

    // The good server and the two that fail at once are settled while the hanging one is still waited for
    // (its 10 s default: test/mcp-connection.test.ts; its failure, reported: test/mcp-servers.test.ts).
    const settled = await serversWhen(
      hearth,
      events,
      (list) => list.find((server) => server.name === 'everything')?.status === 'connected' && list.filter((server) => server.status === 'failed').length === 2,
    );
    const messageOf = (name: string) => settled.find((server) => server.name === name)?.message ?? '';
    expect(messageOf('absent')).toMatch(/command not found/);
    expect(messageOf('crashing')).toMatch(/exited at start with code/);
    expect(settled.find((server) => server.name === 'stuck')?.status).toBe('connecting');

    const { body } = await hearth.request('GET', '/agents/tools');
    expect(body.errors.filter((error: { server?: string }) => error.server).map((error: { server: string }) => error.server).sort()).toEqual(['absent', 'crashing']);
    const integrations = (await hearth.request('GET', '/integrations')).body.integrations as { name: string; status: string }[];
    expect(integrations.filter((entry) => entry.name.startsWith('mcp:')).map(({ name, status }) => [name, status])).toEqual([
      ['mcp:absent', 'failed'],
      ['mcp:crashing', 'failed'],
      ['mcp:everything', 'connected'],
      ['mcp:stuck', 'connecting'],
    ]);
  });

  it('editing mcp.json adds a server live and removing it takes its tools away, each announced as tools_changed', async () => {
    const { hearth, events } = await startWithServers({});
    const configFile = path.join(hearth.dataDir, 'mcp.json');
    const toolsChanged = (holds: (names: string[]) => boolean) =>
      events.nextMatching((event) => event.type === 'tools_changed' && holds(event.tools.map((tool) => tool.name)), 'tools_changed', 20_000);

    await writeMcpConfig(configFile, { helper: fixtureServer() });
    const added = await toolsChanged((names) => names.includes('helper__echo'));
    expect(added.type === 'tools_changed' && added.tools.find((tool) => tool.name === 'helper__echo')).toMatchObject({ source: 'mcp', server: 'helper' });

    await writeMcpConfig(configFile, {});
    await toolsChanged((names) => !names.some((name) => name.startsWith('helper__')));
    const removed = await events.nextMatching((event) => (event as { name?: string; status?: string }).name === 'mcp:helper' && (event as { status?: string }).status === 'removed', 'removed', 10_000);
    expect(removed).toBeDefined();
    expect((await hearth.request('GET', '/agents/tools')).body.servers).toEqual([]);
  });

  it('an MCP tool switched on is offered to every profile, as a user tool is, unless the profile sets mcp_tools: false; switched off, to none', async () => {
    const { hearth, events } = await startWithServers(
      { helper: fixtureServer() },
      { profiles: { mcp_user: profile(['scratchpad', 'helper__pid']), no_mcp: profile(['scratchpad'], 'mcp_tools: false\n').replace('id: mcp_user', 'id: no_mcp') } },
    );
    await serversWhen(hearth, events, allConnected(1));
    const offered = async (profileId: string) =>
      (await hearth.request('GET', '/agents/profiles')).body.profiles.find((entry: { id: string }) => entry.id === profileId).enabled_tools as string[];
    const entry = async (name: string) => (await hearth.request('GET', '/agents/tools')).body.tools.find((tool: { name: string }) => tool.name === name);

    // As configured: only the profile naming a tool has it, and the Tools panel shows it off.
    expect(await offered('secretary')).not.toContain('helper__echo');
    expect(await offered('mcp_user')).toContain('helper__pid');
    expect(await entry('helper__echo')).toMatchObject({ source: 'mcp', server: 'helper', enabled: false, prompt_characters: expect.any(Number) });
    const before = (await hearth.request('GET', '/agents/profiles')).body.profiles.find((profile: { id: string }) => profile.id === 'secretary').prompt_characters;

    expect((await hearth.request('PUT', '/agents/tools/helper__echo/enabled', { enabled: true })).body).toMatchObject({ name: 'helper__echo', enabled: true });
    expect(await offered('secretary')).toContain('helper__echo');
    expect(await offered('mcp_user')).toContain('helper__echo');
    expect(await offered('no_mcp')).not.toContain('helper__echo');
    const after = (await hearth.request('GET', '/agents/profiles')).body.profiles.find((profile: { id: string }) => profile.id === 'secretary').prompt_characters;
    expect(after - before).toBe((await entry('helper__echo')).prompt_characters);

    // Used in a turn of a profile that does not name it.
    hearth.llm.script({ toolCalls: [{ name: 'helper__echo', arguments: { text: 'from the switch' } }] }, { content: 'Echoed.' });
    const sessionId = await hearth.createSession('secretary');
    const answered = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Echo something' });
    expect(answered.body.content).toBe('Echoed.');
    const toolResult = hearth.llm.requests.at(-1)!.body.messages.find((message: { role: string }) => message.role === 'tool');
    expect(toolResult.content).toContain('from the switch');

    // Off takes it from every profile, even one that names it.
    await hearth.request('PUT', '/agents/tools/helper__pid/enabled', { enabled: false });
    expect(await offered('mcp_user')).not.toContain('helper__pid');
    await hearth.request('PUT', '/agents/tools/helper__echo/enabled', { enabled: false });
    expect(await offered('secretary')).not.toContain('helper__echo');
  });

  it('a stdio server gets no secret from Hearth’s environment, and none is left running after shutdown, nor what it started', async () => {
    const llm = await startScriptedOllama();
    cleanups.push(() => llm.close());
    const dataDir = await tempFolder();
    await prepareProfiles(dataDir, { mcp_user: profile(['mcp:helper']) });
    await mkdir(path.join(dataDir, 'user-tools'), { recursive: true });
    // Unjailed on purpose: the pids it reports are then the host's, and the process markers alone must end what it started.
    await writeMcpConfig(path.join(dataDir, 'mcp.json'), { helper: { ...fixtureServer({ env: { GREETING: 'configured for the server' } }), jail: false } });
    const server = await startChildServer(dataDir, { OLLAMA_HOST: llm.url, OPENAI_API_KEY: 'sk-must-not-leak', HA_TOKEN: 'ha-token-must-not-leak', MQTT_PASSWORD: 'mqtt-password-must-not-leak' });
    cleanups.push(() => server.kill());
    await waitUntil(async () => (await server.request('GET', '/agents/tools')).body.servers?.[0]?.status === 'connected', 20_000);

    llm.script(
      { toolCalls: [{ name: 'helper__env', arguments: {} }] },
      { toolCalls: [{ name: 'helper__pid', arguments: {} }] },
      { toolCalls: [{ name: 'helper__spawn_child', arguments: {} }] },
      { content: 'Done.' },
    );
    const sessionId = (await server.request('POST', '/sessions', { profile_id: 'mcp_user' })).body.session_id as string;
    const socket = await server.connect(sessionId);
    cleanups.push(async () => socket.close());
    socket.send({ type: 'message', content: 'Tell me about yourself' });
    await socket.next('stream_end', 20_000);

    const [environment, pid, grandchild] = socket.ofType('tool_call').map((call) => call.result);
    expect(environment).toContain('configured for the server');
    expect(environment).not.toContain('sk-must-not-leak');
    expect(environment).not.toContain('ha-token-must-not-leak');
    expect(environment).not.toContain('mqtt-password-must-not-leak');
    const pids = [Number(pid), Number(grandchild)];
    expect(pids.every((value) => Number.isInteger(value) && !processHasEnded(value))).toBe(true);

    await server.terminate();
    expect(pids.filter((value) => !processHasEnded(value))).toEqual([]);
  }, 60_000);
});
