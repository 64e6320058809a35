// write_tool and reload_tools (issue 4, "Meta-tools"), and the shipped example user tools: real
// files in a temp TOOLS_DIR, real worker hosts, the real app driven by the scripted LLM.
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../src/protocol/events.ts';
import type { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import type { ScriptedLlm, ScriptedToolCall } from './support/scripted-llm.ts';

/** Writing a tool type-checks it in a worker (about a second of CPU the first time, which loads TypeScript): generous under a busy suite. */
const runTimeoutMs = 45_000;
const testTimeoutMs = 90_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
// Registered after the hook above, so the app is closed before its folder is removed (hooks run last-registered first).
const start = useHearth();

async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hearth-write-tool-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts Hearth on a fresh data folder whose user-tools folder holds `files` (name → text) first. */
async function startWith(files: Record<string, string> = {}): Promise<Hearth> {
  const dataDir = await tempDataDir();
  const toolsDir = path.join(dataDir, 'user-tools');
  await mkdir(toolsDir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(toolsDir, file), text);
  return start({ dataDir });
}

/** A conversation with the secretary profile (it has write_tool and reload_tools). */
async function converse(started: Hearth): Promise<EventSocket> {
  const socket = await started.connect(await started.createSession('secretary'));
  return socket;
}

/**
 * One run: the scripted model makes each round of calls in turn (the calls of a round one after
 * another), then answers. Gives the results of this run's calls, in order.
 */
async function run(started: Hearth, socket: EventSocket, ...rounds: ScriptedToolCall[][]): Promise<EventOf<'tool_call'>[]> {
  const before = socket.ofType('tool_call').length;
  started.llm.script(...rounds.map((toolCalls) => ({ toolCalls })), { content: 'Done.' });
  socket.send({ type: 'message', content: 'Go.' });
  // The shipped profiles ask before write_tool installs anything: these runs approve each.
  for (;;) {
    const event = await socket.nextMatching((next) => next.type === 'stream_end' || (next.type === 'approval_required' && next.tool === 'write_tool'), 'stream_end', runTimeoutMs);
    if (event.type === 'stream_end') {
      expect(event.content).toBe('Done.');
      break;
    }
    if (event.type === 'approval_required') socket.send({ type: 'approve', call_id: event.call_id, decision: 'allow' });
  }
  return socket.ofType('tool_call').slice(before);
}

const writeTool = (name: string, code: string, description?: string): ScriptedToolCall => ({
  name: 'write_tool',
  arguments: { name, code, ...(description !== undefined && { description }) },
});

/** The example of manuals/write_tool.md, with a marker to tell versions apart. */
function converter(name = 'convert_temperature', version = 'v1'): string {
  return `export const name = '${name}';

export const description = 'Convert a temperature between Celsius and Fahrenheit.';

export const parameters = {
  type: 'object',
  properties: {
    value: { type: 'number', description: 'The temperature' },
    from: { type: 'string', enum: ['C', 'F'], description: 'Its unit' },
  },
  required: ['value', 'from'],
  additionalProperties: false,
};

export async function execute(params: { value: number; from: 'C' | 'F' }, ctx: any) {
  if (params.from === 'C') return \`${version}: \${params.value} °C = \${Math.round((params.value * 9 / 5 + 32) * 10) / 10} °F\`;
  return \`${version}: \${params.value} °F = \${Math.round(((params.value - 32) * 5 / 9) * 10) / 10} °C\`;
}
`;
}

const toolsDirOf = (started: Hearth) => started.config.TOOLS_DIR;

async function switchesFile(started: Hearth): Promise<unknown> {
  return JSON.parse(await readFile(path.join(toolsDirOf(started), 'enabled.json'), 'utf8'));
}

/** The user tool's entry in GET /agents/tools (its switch and status). */
async function userToolEntry(started: Hearth, name: string): Promise<unknown> {
  const { body } = await started.request('GET', '/agents/tools');
  return body.tools.find((tool: { name: string; source: string }) => tool.source === 'user' && tool.name === name);
}

async function entries(folder: string): Promise<string[]> {
  try {
    return (await readdir(folder)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** The tool files at the top of TOOLS_DIR. */
async function toolFiles(started: Hearth): Promise<string[]> {
  return (await entries(toolsDirOf(started))).filter((entry) => /\.(ts|mts|js|mjs)$/.test(entry));
}

const toolNamesSent = (started: Hearth, request: number): string[] =>
  (started.llm.requests[request]!.body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name);

describe('write_tool', () => {
  it(
    'installs a tool the model can call in its very next round of the same run',
    async () => {
      const hearth = await startWith();
      const socket = await converse(hearth);
      const [written, used] = await run(
        hearth,
        socket,
        [writeTool('convert_temperature', converter())],
        [{ name: 'convert_temperature', arguments: { value: 21, from: 'C' } }],
      );

      expect(written).toMatchObject({ tool: 'write_tool', success: true });
      expect(written!.result).toContain('you can call convert_temperature now');
      expect(written!.result).toContain('- value (number, required): The temperature');
      expect(written!.result).toContain('- from (one of C, F, required): Its unit');
      expect(written!.result).toContain('It is new');
      expect(used).toMatchObject({ tool: 'convert_temperature', success: true, result: 'v1: 21 °C = 69.8 °F' });

      // The round after write_tool was offered the new tool; the one before was not.
      expect(toolNamesSent(hearth, 0)).not.toContain('convert_temperature');
      expect(toolNamesSent(hearth, 1)).toContain('convert_temperature');

      const toolsDir = toolsDirOf(hearth);
      expect(await readFile(path.join(toolsDir, 'convert_temperature.ts'), 'utf8')).toBe(converter());
      expect(await userToolEntry(hearth, 'convert_temperature')).toMatchObject({ enabled: true, status: 'loaded', file: 'convert_temperature.ts' });
      expect(await entries(path.join(toolsDir, '.staging'))).toEqual([]);
      expect(await entries(path.join(toolsDir, '.history'))).toEqual([]);
      const { body } = await hearth.request('GET', '/agents/tools');
      expect(body.tools).toContainEqual(expect.objectContaining({ name: 'convert_temperature', source: 'user' }));
    },
    testTimeoutMs,
  );

  it(
    'installs nothing for broken code, says which line to fix, and leaves the previous version working',
    async () => {
      const hearth = await startWith();
      const socket = await converse(hearth);
      const good = converter('convert_temperature', 'good');
      const syntaxError = good.replace("type: 'number', description: 'The temperature' },", "type: 'number' description: 'The temperature' },");
      const typeError = good.replace('params.value * 9 / 5', 'params.value.lenght * 9 / 5');
      const throwsAtImport = `${good}\nthrow new Error('cannot start without a config file');\n`;
      const results = await run(
        hearth,
        socket,
        [writeTool('convert_temperature', good)],
        [
          writeTool('convert_temperature', syntaxError),
          writeTool('convert_temperature', typeError),
          writeTool('convert_temperature', throwsAtImport),
          writeTool('brand_new_tool', converter('brand_new_tool').replace('export async function', 'export async functio')),
        ],
        [{ name: 'convert_temperature', arguments: { value: 100, from: 'C' } }],
      );
      const [installed, syntax, typed, throwing, neverInstalled, used] = results;
      expect(installed!.success).toBe(true);

      expect(syntax).toMatchObject({ success: false });
      expect(syntax!.result).toMatch(/does not compile:\nline 8, column 29: Expected "}" but found "description"/);
      expect(syntax!.result).toContain('Nothing was installed; any previous version is unchanged.');

      expect(typed).toMatchObject({ success: false });
      expect(typed!.result).toContain('The code has type errors:');
      expect(typed!.result).toMatch(/line 16, column \d+: Property 'lenght' does not exist on type 'number'/);

      expect(throwing).toMatchObject({ success: false });
      expect(throwing!.result).toContain('Failed while loading: cannot start without a config file');

      expect(neverInstalled).toMatchObject({ success: false });
      expect(neverInstalled!.result).toMatch(/line 15/);

      // The first version stays installed, unchanged and callable; nothing else was written.
      expect(used).toMatchObject({ success: true, result: 'good: 100 °C = 212 °F' });
      const toolsDir = toolsDirOf(hearth);
      expect(await readFile(path.join(toolsDir, 'convert_temperature.ts'), 'utf8')).toBe(good);
      expect(await toolFiles(hearth)).toEqual(['convert_temperature.ts']);
      expect(await userToolEntry(hearth, 'convert_temperature')).toMatchObject({ enabled: true, status: 'loaded', file: 'convert_temperature.ts' });
      expect(await entries(path.join(toolsDir, '.history'))).toEqual([]);
      expect(await entries(path.join(toolsDir, '.staging'))).toEqual([]);
    },
    testTimeoutMs,
  );

  it(
    "refuses a module whose exported name differs, a built-in's name, and a malformed name",
    async () => {
      const hearth = await startWith();
      const socket = await converse(hearth);
      const [mismatch, builtin, malformed] = await run(hearth, socket, [
        writeTool('fahrenheit', converter('celsius')),
        writeTool('list_tools', converter('list_tools')),
        writeTool('Convert-Units', converter('Convert-Units')),
      ]);
      expect(mismatch).toMatchObject({ success: false });
      expect(mismatch!.result).toContain('it exports name "celsius" but the file is named fahrenheit: they must match');
      expect(builtin).toMatchObject({ success: false });
      expect(builtin!.result).toContain('"list_tools" is the name of a built-in tool; choose another name.');
      expect(malformed).toMatchObject({ success: false });
      expect(malformed!.result).toContain('"Convert-Units" is not a valid tool name');

      expect(await toolFiles(hearth)).toEqual([]);
      expect(await entries(path.join(toolsDirOf(hearth), '.history'))).toEqual([]);
      const { body } = await hearth.request('GET', '/agents/tools');
      expect(body.tools.filter((tool: { source: string }) => tool.source === 'user')).toEqual([]);
    },
    testTimeoutMs,
  );

  it(
    'overwriting keeps the previous version in .history, and a tool it writes is switched on',
    async () => {
      const hearth = await startWith({ 'enabled.json': JSON.stringify({ disabled: ['zz_other', 'convert_temperature'] }) });
      const socket = await converse(hearth);
      const first = converter('convert_temperature', 'v1');
      const second = converter('convert_temperature', 'v2');
      const [one, two, used] = await run(
        hearth,
        socket,
        [writeTool('convert_temperature', first)],
        [writeTool('convert_temperature', second)],
        [{ name: 'convert_temperature', arguments: { value: 50, from: 'F' } }],
      );
      expect(one!.success).toBe(true);
      expect(two!.success).toBe(true);
      expect(used).toMatchObject({ success: true, result: 'v2: 50 °F = 10 °C' });

      const toolsDir = toolsDirOf(hearth);
      const history = await entries(path.join(toolsDir, '.history'));
      expect(history).toHaveLength(1);
      expect(history[0]).toMatch(/^convert_temperature\.\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z\.ts$/);
      expect(two!.result).toContain(`The previous version was kept as .history/${history[0]}.`);
      expect(await readFile(path.join(toolsDir, '.history', history[0]!), 'utf8')).toBe(first);
      expect(await readFile(path.join(toolsDir, 'convert_temperature.ts'), 'utf8')).toBe(second);
      expect(await switchesFile(hearth)).toEqual({ disabled: ['zz_other'] });
    },
    testTimeoutMs,
  );

  it(
    'takes the description argument when the code exports none',
    async () => {
      const hearth = await startWith();
      const socket = await converse(hearth);
      const code = converter('convert_temperature').replace("export const description = 'Convert a temperature between Celsius and Fahrenheit.';", '');
      const [written] = await run(hearth, socket, [writeTool('convert_temperature', code, 'Converts °C and °F.')]);
      expect(written).toMatchObject({ success: true });
      expect(written!.result).toContain('Description: Converts °C and °F.');
    },
    testTimeoutMs,
  );

  it(
    "installs the template as a tool under its exported name (it documents a working module)",
    async () => {
      const hearth = await startWith();
      const socket = await converse(hearth);
      const template = await readFile(path.resolve('user-tools/_template.ts'), 'utf8');
      const [written, used, again] = await run(
        hearth,
        socket,
        [writeTool('word_stats', template)],
        [
          { name: 'word_stats', arguments: { text: 'the cat and the hat\nthe end', top: 1 } },
          { name: 'word_stats', arguments: { text: 'again' } },
        ],
      );
      expect(written).toMatchObject({ success: true });
      expect(used).toMatchObject({ success: true });
      expect(used!.result).toBe('7 words, 2 lines, 27 characters.\nMost frequent: the (3).\nCounted 1 time(s) so far.');
      expect(again!.result).toContain('Counted 2 time(s) so far.');
    },
    testTimeoutMs,
  );
});

describe('reload_tools', () => {
  it(
    'reloads now and reports the loaded tools and each failed file with its error',
    async () => {
      const hearth = await startWith({
        'alpha_tool.ts': converter('alpha_tool'),
        'broken_tool.ts': "export const name = 'broken_tool';\nexport const description = 'Broken.';\nexport const parameters = { type: 'object' ;\n",
        '_helper.ts': 'export const helper = 1;\n',
      });
      const socket = await converse(hearth);
      await writeFile(path.join(toolsDirOf(hearth), 'beta_tool.ts'), converter('beta_tool'));
      const [report] = await run(hearth, socket, [{ name: 'reload_tools', arguments: {} }]);
      expect(report).toMatchObject({ success: true });
      expect(report!.result).toMatch(/^Loaded \(2\): alpha_tool, beta_tool\nFailed \(1\):\n- broken_tool\.ts: Does not compile: line 3, column \d+: /);
    },
    testTimeoutMs,
  );
});

describe('the shipped example user tools', () => {
  /** Hearth with the checkout's user-tools/ as SHIPPED_TOOLS_DIR, as a default install loads them. */
  const startShipped = (options: { dataDir?: string; llm?: ScriptedLlm } = {}) => start({ ...options, env: { SHIPPED_TOOLS_DIR: path.resolve('user-tools') } });

  it('load with no errors from the checkout, which holds no state of theirs, and are enabled for every profile', async () => {
    // The switches are the person's: kept in TOOLS_DIR, never shipped.
    expect(await readdir(path.resolve('user-tools'))).toEqual(['_template.ts', 'get_current_datetime.ts', 'user_notes.ts']);
    const hearth = await startShipped();
    await hearth.deps.userTools.whenLoaded();
    const { body } = await hearth.request('GET', '/agents/tools');
    expect(body.errors).toEqual([]);
    const userTools = body.tools.filter((tool: { source: string }) => tool.source === 'user').map((tool: { name: string }) => tool.name);
    expect(userTools.sort()).toEqual(['get_current_datetime', 'user_notes']);
    const socket = await hearth.connect(await hearth.createSession('smart_home'));
    await run(hearth, socket);
    expect(toolNamesSent(hearth, 0)).toEqual(expect.arrayContaining(['get_current_datetime', 'user_notes']));
  });

  it('a tool the person or write_tool puts in TOOLS_DIR replaces the shipped one of that name; nothing is written to the shipped folder', async () => {
    const shippedDir = await tempDataDir();
    await writeFile(path.join(shippedDir, 'convert_temperature.ts'), converter('convert_temperature', 'shipped'));
    const shippedBefore = await readFile(path.join(shippedDir, 'convert_temperature.ts'), 'utf8');
    const hearth = await start({ env: { SHIPPED_TOOLS_DIR: shippedDir } });
    await hearth.deps.userTools.whenLoaded();
    expect(await userToolEntry(hearth, 'convert_temperature')).toMatchObject({ enabled: true, file: 'convert_temperature.ts', status: 'loaded' });
    const socket = await converse(hearth);
    const call = { name: 'convert_temperature', arguments: { value: 100, from: 'C' } };

    const [shipped, written, mine] = await run(hearth, socket, [call], [writeTool('convert_temperature', converter('convert_temperature', 'mine'))], [call]);

    expect(shipped!.result).toBe('shipped: 100 °C = 212 °F');
    expect(written).toMatchObject({ success: true });
    expect(mine!.result).toBe('mine: 100 °C = 212 °F');
    expect(await toolFiles(hearth)).toEqual(['convert_temperature.ts']);
    // Switching it off writes the person's switches beside their tools.
    expect((await hearth.request('PUT', '/agents/tools/convert_temperature/enabled', { enabled: false })).status).toBe(200);
    expect(await switchesFile(hearth)).toEqual({ disabled: ['convert_temperature'] });
    expect(await entries(shippedDir)).toEqual(['convert_temperature.ts']);
    expect(await readFile(path.join(shippedDir, 'convert_temperature.ts'), 'utf8')).toBe(shippedBefore);
  });

  it('get_current_datetime tells the time in the server time zone or a named one, and refuses an unknown zone', async () => {
    const hearth = await startShipped();
    await hearth.deps.userTools.whenLoaded();
    const socket = await converse(hearth);
    const before = Math.floor(Date.now() / 1000);
    const [local, kolkata, unknown] = await run(hearth, socket, [
      { name: 'get_current_datetime', arguments: {} },
      { name: 'get_current_datetime', arguments: { time_zone: 'Asia/Kolkata' } },
      { name: 'get_current_datetime', arguments: { time_zone: 'Mars/Olympus' } },
    ]);
    const serverZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(local).toMatchObject({ success: true });
    expect(local!.result).toContain(`Time zone: ${serverZone} (UTC`);
    expect(local!.result).toContain("the server's time zone");
    const unix = Number(/Unix time: (\d+)/.exec(local!.result)![1]);
    expect(unix).toBeGreaterThanOrEqual(before);
    expect(unix).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));

    expect(kolkata).toMatchObject({ success: true });
    expect(kolkata!.result).toMatch(/ISO 8601: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+05:30/);
    expect(kolkata!.result).toContain('Time zone: Asia/Kolkata (UTC+05:30)');
    expect(unknown).toMatchObject({ success: false });
    expect(unknown!.result).toContain('"Mars/Olympus" is not a time zone I know');
  });

  it('user_notes adds, lists, searches and deletes notes, which survive a restart', async () => {
    const dataDir = await tempDataDir();
    const llm = await startScriptedOllama();
    cleanups.push(() => llm.close());
    let hearth = await startShipped({ dataDir, llm });
    await hearth.deps.userTools.whenLoaded();
    let socket = await converse(hearth);
    const notes = (args: Record<string, unknown>): ScriptedToolCall => ({ name: 'user_notes', arguments: args });
    const results = await run(hearth, socket, [
      notes({ action: 'list' }),
      notes({ action: 'add', text: 'Buy oat MILK', tags: ['Shopping', ' errands '] }),
      notes({ action: 'add', text: 'Call the plumber about the boiler', tags: ['house'] }),
      notes({ action: 'add', text: 'Renew passport' }),
      notes({ action: 'add', text: '   ' }),
      notes({ action: 'search', query: 'milk' }),
      notes({ action: 'search', query: 'HOUSE boiler' }),
      notes({ action: 'search', query: 'shopping' }),
      notes({ action: 'search', query: 'dentist' }),
      notes({ action: 'delete', id: 1 }),
      notes({ action: 'delete', id: 1 }),
      notes({ action: 'list' }),
    ]);
    const [empty, add1, add2, add3, blank, milk, house, byTag, none, deleted, gone, list] = results.map((result) => result.result);
    expect(empty).toContain('You have no notes yet.');
    expect(add1).toMatch(/^Saved note #1 \(tags: shopping, errands\) on \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/);
    expect(add2).toMatch(/^Saved note #2 \(tags: house\)/);
    expect(add3).toMatch(/^Saved note #3 on /);
    expect(blank).toBe('add needs "text": the note to save.');
    expect(results[4]!.success).toBe(false);
    expect(milk).toMatch(/^1 notes match "milk":\n#1 \[[^\]]+\] Buy oat MILK \(tags: shopping, errands\)$/);
    expect(house).toMatch(/^1 notes match "HOUSE boiler":\n#2 .*Call the plumber about the boiler/);
    expect(byTag).toMatch(/^1 notes match "shopping":\n#1 /);
    expect(none).toBe('No note matches "dentist" (3 notes in all; list shows them).');
    expect(deleted).toBe('Deleted note #1: Buy oat MILK');
    expect(gone).toBe('There is no note #1. Use list or search to find the right id.');
    expect(results[10]!.success).toBe(false);
    expect(list).toMatch(/^2 notes:\n#2 .*plumber.*\n#3 .*Renew passport$/);

    // A restart on the same data folder: ctx.kv was kept in the database, ids carry on.
    await hearth.close();
    hearth = await startShipped({ dataDir, llm });
    await hearth.deps.userTools.whenLoaded();
    socket = await converse(hearth);
    const [afterRestart, added] = await run(hearth, socket, [notes({ action: 'list' }), notes({ action: 'add', text: 'Water the plants' })]);
    expect(afterRestart!.result).toMatch(/^2 notes:\n#2 .*plumber.*\n#3 .*Renew passport$/);
    expect(added!.result).toMatch(/^Saved note #4 on /);
  });
});
