// The user-tool host (issue 4, "User-tool host (isolation)"): real tool files in TOOLS_DIR, real
// host processes, the real app on port 0 driven over a real WebSocket by the scripted LLM.
// (The sandbox itself, issue 13, is tested in test/security/.)
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../src/protocol/events.ts';
import type { EventSocket } from './support/event-socket.ts';
import { toolerProfile } from './support/test-tools.ts';
import { type Hearth, type HearthOptions, useHearth } from './support/hearth-server.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import type { ScriptedLlm, ScriptStep } from './support/scripted-llm.ts';
import { waitUntil } from './support/wait-until.ts';

// ---------------------------------------------------------------------------------------------
// Writing tool files

interface ToolFile {
  /** Code before the exports: imports, module-level state. */
  prelude?: string;
  /** The properties of the parameters schema. */
  properties?: Record<string, unknown>;
  /** The body of `async function execute(params, ctx)`. */
  execute: string;
}

/** The text of a user-tool module named `name` (the file must be `<name>.ts`). */
function toolModule(name: string, tool: ToolFile): string {
  return `${tool.prelude ?? ''}
export const name = ${JSON.stringify(name)};
export const description = 'Test tool ${name}.';
export const parameters = { type: 'object', properties: ${JSON.stringify(tool.properties ?? {})} };
export async function execute(params: any, ctx: any): Promise<unknown> {
${tool.execute}
}
`;
}

/** Module-level state that proves which host generation ran a call: a random id and a call counter. */
const generationPrelude = `const generation = Math.random().toString(36).slice(2, 10);
let calls = 0;`;

/** A tool that answers at once with its host generation and how many calls that generation has seen. */
const pingTool: ToolFile = {
  prelude: generationPrelude,
  execute: `  calls += 1;
  return \`pong generation=\${generation} calls=\${calls}\`;`,
};

/**
 * A tool that writes the file `marker` in its session's folder, its working folder (so the test
 * knows it runs: see markerOf), and then never returns.
 */
function stuckTool(marker: string, how: 'busy loop' | 'pending promise'): ToolFile {
  return {
    prelude: `import { writeFileSync } from 'node:fs';`,
    execute: `  writeFileSync(${JSON.stringify(marker)}, 'running');
  ${how === 'busy loop' ? 'while (true) {}' : 'await new Promise(() => {});'}`,
  };
}

async function writeToolFiles(toolsDir: string, files: Record<string, string>): Promise<void> {
  await mkdir(toolsDir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(toolsDir, file), text);
}

/** Writes `<name>.ts` for each tool. */
async function writeTools(toolsDir: string, tools: Record<string, ToolFile>): Promise<void> {
  await writeToolFiles(toolsDir, Object.fromEntries(Object.entries(tools).map(([name, tool]) => [`${name}.ts`, toolModule(name, tool)])));
}


// ---------------------------------------------------------------------------------------------
// Running Hearth with user tools

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
// Registered after the hook above, so the app is closed before its folder is removed (hooks run last-registered first).
const start = useHearth();

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hearth-user-tools-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const toolsDirOf = (hearth: Hearth) => hearth.config.TOOLS_DIR;
const userToolsOf = (hearth: Hearth) => hearth.deps.userTools;

/** Starts Hearth and waits for the user tools' first load, which start-up leaves running in the background. */
async function startLoaded(options: HearthOptions): Promise<Hearth> {
  const started = await start(options);
  await userToolsOf(started).whenLoaded();
  return started;
}

/**
 * Writes the tools into a fresh data folder, then starts Hearth on it, so they are loaded at start-up
 * (no file-watcher event, no extra reload) and listed by the `tooler` profile.
 */
async function startWithTools(tools: Record<string, ToolFile>, options: HearthOptions = {}): Promise<Hearth> {
  const dataDir = await tempDir();
  await writeTools(path.join(dataDir, 'user-tools'), tools);
  const started = await startLoaded({ ...options, dataDir, profiles: { tooler: toolerProfile(Object.keys(tools), 6), ...options.profiles } });
  const { body } = await started.request('GET', '/agents/tools');
  expect(body.errors).toEqual([]);
  return started;
}

/** Waits until the manager's host is running again after one was ended (and replaced at once). */
async function waitForLiveHost(hearth: Hearth): Promise<void> {
  await waitUntil(() => userToolsOf(hearth).hosts().some((host) => host.state === 'running'), 5_000);
}

/** Where a tool called in `sessionId` writes the relative file `name`: the session's folder, the host's working folder. */
const markerOf = (hearth: Hearth, sessionId: string, name: string) => path.join(hearth.config.SESSION_FILES_DIR, sessionId, name);

/** The generation folders the manager keeps under TOOLS_DIR/.build. */
async function generationFolders(hearth: Hearth): Promise<string[]> {
  try {
    return (await readdir(path.join(toolsDirOf(hearth), '.build'))).filter((entry) => entry.startsWith('generation-'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Scripts one round that calls `name`, then a closing answer; sends the message and gives the call's result. */
async function callThroughChat(hearth: Hearth, socket: EventSocket, name: string, args: Record<string, unknown> = {}) {
  hearth.llm.script({ toolCalls: [{ name, arguments: args }] }, { content: `called ${name}` });
  socket.send({ type: 'message', content: `Call ${name}` });
  const result = await socket.next('tool_call');
  expect(result.tool).toBe(name);
  await socket.next('stream_end');
  return result;
}

/** The generation id a `pingTool` result reports. */
function generationOf(result: EventOf<'tool_call'>): string {
  const match = /generation=(\w+)/.exec(result.result);
  if (!match) throw new Error(`no generation in ${JSON.stringify(result.result)}`);
  return match[1]!;
}

/** Answers each conversation (told apart by a word in its first user message) from its own script. */
function scriptPerConversation(llm: ScriptedLlm, scripts: Record<string, ScriptStep[]>): void {
  llm.respondWith((request) => {
    const firstUser = request.body?.messages?.find((message: { role: string }) => message.role === 'user');
    const text = String(firstUser?.content ?? '');
    const key = Object.keys(scripts).find((word) => text.includes(word));
    return (key !== undefined && scripts[key]!.shift()) || { content: `unscripted reply to ${JSON.stringify(text)}` };
  });
}

/** Times one GET /health round trip. */
async function timeHealth(hearth: Hearth): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const { status } = await hearth.request('GET', '/health');
  return { ms: performance.now() - started, status };
}

// ---------------------------------------------------------------------------------------------

describe('user-tool host', () => {
  it('ends a `while (true) {}` tool at the timeout while /health and another session keep going, and replaces the host at once', async () => {
    const hearth = await startWithTools({ spin: stuckTool('spinning', 'busy loop'), ping: pingTool }, { env: { USER_TOOL_TIMEOUT_MS: '1500' } });
    const streamed = Array.from({ length: 12 }, (_, index) => `part${index} `);
    scriptPerConversation(hearth.llm, {
      spinner: [
        { toolCalls: [{ name: 'ping', arguments: {} }] },
        // The model asks for both in one round: ping runs the moment spin has been ended.
        { toolCalls: [{ name: 'spin', arguments: {} }, { name: 'ping', arguments: {} }] },
        { content: 'Spinner done.' },
      ],
      streamer: [{ chunks: streamed, delayMs: 15 }],
    });
    expect((await timeHealth(hearth)).status).toBe(200); // warm the connection

    const spinnerId = await hearth.createSession('tooler');
    const marker = markerOf(hearth, spinnerId, 'spinning');
    const spinner = await hearth.connect(spinnerId);
    spinner.send({ type: 'message', content: 'spinner: call ping, then spin and ping' });
    const before = await spinner.next('tool_call');
    expect(before).toMatchObject({ tool: 'ping', success: true });
    expect((await spinner.next('tool_started')).tool).toBe('spin');
    await waitUntil(() => existsSync(marker), 5_000);

    // The tool spins in its host process; the server's main thread answers while it does (how fast is
    // bench/RESULTS.md's business: a wall-clock bound here failed on a busy CI machine).
    const health = await timeHealth(hearth);
    expect(health.status).toBe(200);

    // Another session streams its whole answer while the first is still stuck.
    const streamer = await hearth.connect(await hearth.createSession('tooler'));
    streamer.send({ type: 'message', content: 'streamer: tell me something' });
    const end = await streamer.next('stream_end');
    expect(end.content).toBe(streamed.join(''));
    expect(streamer.ofType('stream_delta').map((event) => event.delta).join('')).toBe(streamed.join(''));
    expect(spinner.ofType('tool_call')).toHaveLength(1); // spin has not answered yet

    const timedOut = await spinner.next('tool_call');
    expect(timedOut.tool).toBe('spin');
    expect(timedOut.success).toBe(false);
    expect(timedOut.result).toMatch(/timed out/);

    // The next call, right after the timeout, finds a new host generation already running.
    const after = await spinner.next('tool_call');
    expect(after.tool).toBe('ping');
    expect(after.result).toMatch(/^pong /);
    expect(after.success).toBe(true);
    expect(generationOf(after)).not.toBe(generationOf(before));
    expect((await spinner.next('stream_end')).content).toBe('Spinner done.');
  });

  for (const how of ['busy loop', 'pending promise'] as const) {
    it(`stops a user tool that ignores its signal (${how}): stream_stopped within 1 s, then the session and the user tools work`, async () => {
      const hearth = await startWithTools({ hang: stuckTool('hanging', how), ping: pingTool }, { env: { USER_TOOL_TIMEOUT_MS: '60000' } });
      const sessionId = await hearth.createSession('tooler');
      const marker = markerOf(hearth, sessionId, 'hanging');
      const socket = await hearth.connect(sessionId);
      const before = await callThroughChat(hearth, socket, 'ping');

      hearth.llm.script({ toolCalls: [{ name: 'hang', arguments: {} }] });
      socket.send({ type: 'message', content: 'Call hang' });
      await socket.next('tool_started');
      await waitUntil(() => existsSync(marker), 5_000);

      const stopSent = performance.now();
      socket.send({ type: 'stop' });
      await socket.next('stream_stopped');
      expect(performance.now() - stopSent).toBeLessThan(1_000);
      const stopped = socket.ofType('tool_call').at(-1)!;
      expect(stopped).toMatchObject({ tool: 'hang', success: false });
      expect(stopped.result).toMatch(/Stopped by the user/);
      expect(stopped.result).toMatch(/ended with its host/);

      await waitForLiveHost(hearth);
      const after = await callThroughChat(hearth, socket, 'ping');
      expect(after.success).toBe(true);
      expect(after.result).toMatch(/^pong /);
      expect(generationOf(after)).not.toBe(generationOf(before));
    });
  }

  it('stops a tool that honours ctx.signal without replacing its host', async () => {
    const hearth = await startWithTools({
      patient: {
        prelude: generationPrelude,
        properties: { wait: { type: 'boolean' } },
        execute: `  calls += 1;
  if (params.wait) await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
  return \`\${ctx.signal.aborted ? 'stopped' : 'done'} generation=\${generation} calls=\${calls}\`;`,
      },
    });
    const socket = await hearth.connect(await hearth.createSession('tooler'));
    hearth.llm.script({ toolCalls: [{ name: 'patient', arguments: { wait: true } }] });
    socket.send({ type: 'message', content: 'Call patient and wait' });
    await socket.next('tool_started');

    const stopSent = performance.now();
    socket.send({ type: 'stop' });
    await socket.next('stream_stopped');
    // Not a speed target: a bound a loaded 2-core run keeps (1,025 ms was seen beside the suite) and a stop that
    // waited for USER_TOOL_TIMEOUT_MS (30 s) does not; the tool's own answer below says the signal reached it.
    expect(performance.now() - stopSent).toBeLessThan(5_000);
    const stopped = socket.ofType('tool_call').at(-1)!;
    expect(stopped.success).toBe(false);
    expect(stopped.result).toMatch(/Stopped by the user/);
    expect(stopped.result).toMatch(/stopped generation=\w+ calls=1/);
    expect(stopped.result).not.toMatch(/ended with its host/);

    const next = await callThroughChat(hearth, socket, 'patient', { wait: false });
    expect(next.success).toBe(true);
    expect(next.result).toBe(`done generation=${generationOf(stopped)} calls=2`);
  });

  it('ends a tool that allocates without bound by the heap limit, not the server', async () => {
    const hearth = await startWithTools({
      hog: { execute: `  const hoard: number[][] = [];\n  for (;;) hoard.push(new Array(1e6).fill(1));` },
      ping: pingTool,
    });
    const socket = await hearth.connect(await hearth.createSession('tooler'));
    const result = await callThroughChat(hearth, socket, 'hog');
    expect(result.success).toBe(false);
    expect(result.result).toMatch(/memory/i);

    expect((await hearth.request('GET', '/health')).body).toMatchObject({ status: 'ok' });
    await waitForLiveHost(hearth);
    const after = await callThroughChat(hearth, socket, 'ping');
    expect(after.success).toBe(true);
    expect(after.result).toMatch(/^pong /);
  });

  it('loads and runs tools from a TOOLS_DIR given as a relative path (the default is ./user-tools)', async () => {
    const dataDir = await tempDir();
    await writeTools(path.join(dataDir, 'user-tools'), { ping: pingTool });
    const relative = path.relative(process.cwd(), path.join(dataDir, 'user-tools'));
    expect(path.isAbsolute(relative)).toBe(false);
    const hearth = await startLoaded({ dataDir, profiles: { tooler: toolerProfile(['ping'], 6) }, env: { TOOLS_DIR: relative } });
    expect((await hearth.request('GET', '/agents/tools')).body.errors).toEqual([]);
    const socket = await hearth.connect(await hearth.createSession('tooler'));
    expect(await callThroughChat(hearth, socket, 'ping')).toMatchObject({ success: true, result: expect.stringMatching(/^pong /) });
  });

  it('keeps ctx.kv across a restart, per tool', async () => {
    const dataDir = await tempDir();
    const llm = await startScriptedOllama();
    cleanups.push(() => llm.close());
    const memo: ToolFile = {
      properties: { value: {}, forget: { type: 'boolean' } },
      execute: `  if (params.value !== undefined) {
    await ctx.kv.set('fact', params.value);
    return \`saved for \${ctx.sessionId}\`;
  }
  if (params.forget) return \`forgot=\${await ctx.kv.delete('fact')}\`;
  return \`fact=\${JSON.stringify(await ctx.kv.get('fact'))} keys=\${JSON.stringify(await ctx.kv.list())}\`;`,
    };
    await writeTools(path.join(dataDir, 'user-tools'), { memo, other_memo: memo });
    const profiles = { tooler: toolerProfile(['memo', 'other_memo'], 6) };

    let hearth = await startLoaded({ dataDir, llm, profiles });
    const sessionId = await hearth.createSession('tooler');
    let socket = await hearth.connect(sessionId);
    expect(await callThroughChat(hearth, socket, 'memo', { value: { colour: 'teal', count: 3 } })).toMatchObject({
      result: `saved for ${sessionId}`,
      success: true,
    });
    await hearth.close();

    hearth = await startLoaded({ dataDir, llm, profiles });
    socket = await hearth.connect(sessionId);
    expect((await callThroughChat(hearth, socket, 'memo')).result).toBe('fact={"colour":"teal","count":3} keys=["fact"]');
    expect((await callThroughChat(hearth, socket, 'other_memo')).result).toBe('fact=undefined keys=[]');
    expect((await callThroughChat(hearth, socket, 'memo', { forget: true })).result).toBe('forgot=true');
    expect((await callThroughChat(hearth, socket, 'memo')).result).toBe('fact=undefined keys=[]');
  });

  it('lets a call in flight finish on the old host across a reload; the next call runs in the new generation', async () => {
    const hearth = await startWithTools({
      slow: {
        prelude: `${generationPrelude}\nimport { existsSync, writeFileSync } from 'node:fs';`,
        properties: { wait: { type: 'boolean' } },
        execute: `  calls += 1;
  if (params.wait) writeFileSync('started', 'running');
  while (params.wait && !existsSync('release')) await new Promise((resolve) => setTimeout(resolve, 10));
  return \`slow done generation=\${generation} calls=\${calls}\`;`,
      },
    });
    hearth.llm.script(
      { toolCalls: [{ name: 'slow', arguments: { wait: true } }] },
      { toolCalls: [{ name: 'slow', arguments: { wait: false } }] },
      { content: 'Both done.' },
    );
    const sessionId = await hearth.createSession('tooler');
    const release = markerOf(hearth, sessionId, 'release');
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Call slow twice' });
    await socket.next('tool_started');
    await waitUntil(() => existsSync(markerOf(hearth!, sessionId, 'started')), 5_000); // the call runs in the old host

    const report = await userToolsOf(hearth).reload({ force: true });
    expect(report.loaded).toEqual(['slow']);
    expect(socket.ofType('tool_call')).toEqual([]); // still running on the old host
    expect(await generationFolders(hearth)).toHaveLength(2); // the old generation is kept for it

    await writeFile(release, 'go');
    const first = await socket.next('tool_call');
    expect(first).toMatchObject({ success: true, result: expect.stringMatching(/^slow done generation=\w+ calls=1$/) });
    const second = await socket.next('tool_call');
    expect(second.success).toBe(true);
    expect(second.result).toMatch(/^slow done generation=\w+ calls=1$/);
    expect(generationOf(second)).not.toBe(generationOf(first));
    await socket.next('stream_end');

    // Once its call finished, the old host is retired and its build removed.
    await waitUntil(async () => (await generationFolders(hearth!)).length === 1, 7_000);
  });

  it('reports a syntax error, a throw at import and an endless loop at import, each with its file, and loads the good tool', async () => {
    const dataDir = await tempDir();
    await writeToolFiles(path.join(dataDir, 'user-tools'), {
      'broken_syntax.ts': `export const name = 'broken_syntax';\nexport const description = ;\n`,
      'throws_at_import.ts': `throw new Error('kaboom at import');\n${toolModule('throws_at_import', pingTool)}`,
      'loops_at_import.mts': `for (;;) {}\n${toolModule('loops_at_import', pingTool)}`,
      'good_tool.ts': toolModule('good_tool', pingTool),
      '_skipped_helper.ts': 'this is not code',
      '.hidden.ts': 'neither is this',
      'notes.txt': 'not a tool file',
    });
    // The endless loop costs the load timeout, shortened here (the 10 s default is checked in
    // test/internals/user-tool-host.test.ts), in the background: start-up does not wait for it
    // (test/user-tool-recovery.test.ts).
    const hearth = await startLoaded({ dataDir, profiles: { tooler: toolerProfile(['good_tool'], 6) }, userToolLoadTimeoutMs: 2_000 });

    const { body } = await hearth.request('GET', '/agents/tools');
    expect(body.errors.map((error: { file: string }) => error.file)).toEqual(['broken_syntax.ts', 'loops_at_import.mts', 'throws_at_import.ts']);
    const messageOf = (file: string) => body.errors.find((error: { file: string }) => error.file === file).message as string;
    expect(messageOf('broken_syntax.ts')).toMatch(/line 2/);
    expect(messageOf('throws_at_import.ts')).toMatch(/kaboom at import/);
    expect(messageOf('loops_at_import.mts')).toMatch(/did not finish within 2 s/);
    const userTools = body.tools.filter((tool: { source: string }) => tool.source === 'user');
    expect(userTools.filter((tool: { status: string }) => tool.status === 'loaded').map((tool: { name: string }) => tool.name)).toEqual(['good_tool']);
    // The files that failed are listed too, under their names, with their errors.
    expect(userTools.filter((tool: { status: string }) => tool.status === 'failed').map((tool: { name: string }) => tool.name)).toEqual([
      'broken_syntax',
      'loops_at_import',
      'throws_at_import',
    ]);

    const socket = await hearth.connect(await hearth.createSession('tooler'));
    expect(await callThroughChat(hearth, socket, 'good_tool')).toMatchObject({ success: true, result: expect.stringMatching(/^pong /) });
  }, 40_000);

  it('keeps one generation after 30 reloads, each with fresh helper modules', async () => {
    const dataDir = await tempDir();
    const toolsDir = path.join(dataDir, 'user-tools');
    await writeTools(toolsDir, {
      versioned: { prelude: `import { version } from './_version.ts';`, execute: '  return `version=${version}`;' },
    });
    await writeToolFiles(toolsDir, { '_version.ts': 'export const version = 0;\n' });
    // Unjailed: what is counted here is generations, and a jailed host takes twice as long to start (30 loading
    // hosts: 5.8 s against 3 s); the jailed hosts are tested in test/security/.
    const hearth = await startLoaded({ dataDir, profiles: { tooler: toolerProfile(['versioned'], 6) }, env: { JAIL: 'off' } });
    // Editing the helper may also wake the file watcher: its reloads only add to the 30.
    for (let version = 1; version <= 30; version++) {
      await writeToolFiles(toolsDir, { '_version.ts': `export const version = ${version};\n` });
      const report = await userToolsOf(hearth).reload();
      expect(report).toEqual({ loaded: ['versioned'], errors: [] });
    }
    await waitUntil(async () => (await generationFolders(hearth!)).length === 1, 10_000);

    const socket = await hearth.connect(await hearth.createSession('tooler'));
    expect(await callThroughChat(hearth, socket, 'versioned')).toMatchObject({ success: true, result: 'version=30' });
  }, 30_000);

  it('skips a reload when TOOLS_DIR holds what is already loaded, unless forced', async () => {
    const hearth = await startWithTools({ ping: pingTool });
    const manager = userToolsOf(hearth);
    let announced = 0;
    manager.on('changed', () => announced++);
    const before = await generationFolders(hearth);

    expect(await manager.reload()).toEqual({ loaded: ['ping'], errors: [] });
    expect(announced).toBe(0);
    expect(await generationFolders(hearth)).toEqual(before);

    expect(await manager.reload({ force: true })).toEqual({ loaded: ['ping'], errors: [] });
    expect(announced).toBe(1);
    await waitUntil(async () => {
      const folders = await generationFolders(hearth!);
      return folders.length === 1 && folders[0] !== before[0];
    });
  });

  it('leaves nothing behind in TOOLS_DIR/.build once closed, even with a reload queued and a validation running', async () => {
    const started = await startWithTools({ ping: pingTool });
    const manager = userToolsOf(started);
    const toolsDir = toolsDirOf(started);
    const running = manager.reload({ force: true });
    const queued = manager.reload({ force: true });
    const validating = manager.validate('checked', toolModule('checked', pingTool));

    await started.close();
    expect(existsSync(path.join(toolsDir, '.build'))).toBe(false);
    await Promise.all([running, queued, validating]);
    expect(existsSync(path.join(toolsDir, '.build'))).toBe(false);
  });
});
