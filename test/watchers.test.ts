// Watching TOOLS_DIR and PROFILES_DIR (issue 4, "Watching"): real files written by hand, the real
// chokidar watcher, real host processes, the real app on port 0 and real sockets. Every wait is on
// an event (tools_changed, a turn's events) or a condition with a deadline, never a fixed sleep.
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import type { EventOf, ToolSummary } from '../src/protocol/events.ts';
import type { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { waitUntil } from './support/wait-until.ts';

/** A user-tool module: `execute` gets `params.text` and returns what `body` returns. */
function toolModule(name: string, body: string, options: { prelude?: string; description?: string } = {}): string {
  return `${options.prelude ?? ''}
export const name = ${JSON.stringify(name)};
export const description = ${options.description ?? JSON.stringify(`Test tool ${name}.`)};
export const parameters = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
export async function execute(params: { text: string }): Promise<string> {
  ${body}
}
`;
}

function watcherProfile(temperature: number, tools: string[]): string {
  return `---
id: watcher
name: Watcher
description: Calls the tools written by hand.
temperature: ${temperature}
max_iterations: 4
planning_enabled: false
tools: [${tools.join(', ')}]
---
You call the tools you are asked to.
`;
}

const profileTools = ['greet', 'good_tool', 'shout', 'scratchpad'];

/** The Hearth of the running test, for the file helpers below (closed after the test by useHearth). */
let hearth: Hearth | undefined;
let announcements: EventSocket;
/** File write → `tools_changed` on an open socket, in milliseconds, over every test. */
const latencies: number[] = [];

const startApp = useHearth();

afterAll(() => {
  if (latencies.length === 0) return;
  const sorted = [...latencies].sort((left, right) => left - right);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.info(
    `file write → tools_changed: median ${median.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms over ${sorted.length} changes`,
  );
});

/** Starts Hearth with the watcher profile and a socket that only listens for announcements. */
async function start(): Promise<Hearth> {
  hearth = await startApp({ profiles: { watcher: watcherProfile(0.1, profileTools) } });
  await mkdir(hearth.config.TOOLS_DIR, { recursive: true });
  announcements = await hearth.connect(await hearth.createSession('watcher'));
  return hearth;
}

const toolFile = (file: string) => path.join(hearth!.config.TOOLS_DIR, file);
const profileFile = (id: string) => path.join(hearth!.config.PROFILES_DIR, `${id}.md`);

/**
 * Makes a change on disk and resolves with the first `tools_changed` after it whose tools satisfy
 * `expected`, recording the latency from the start of the change.
 */
async function announced(change: () => Promise<void>, expected: (tools: ToolSummary[]) => boolean = () => true): Promise<ToolSummary[]> {
  const started = performance.now();
  await change();
  const event = (await announcements.nextMatching(
    (candidate) => candidate.type === 'tools_changed' && expected(candidate.tools),
    'the expected tools_changed',
  )) as EventOf<'tools_changed'>;
  latencies.push(performance.now() - started);
  return event.tools;
}

const named = (name: string) => (tools: ToolSummary[]) => tools.find((tool) => tool.name === name);
const has = (name: string) => (tools: ToolSummary[]) => named(name)(tools) !== undefined;

/** One turn on a fresh session in which the scripted model calls `name`; gives the finished call. */
async function callTool(name: string, args: Record<string, unknown> = { text: 'ada' }): Promise<EventOf<'tool_call'>> {
  const socket = await hearth!.connect(await hearth!.createSession('watcher'));
  try {
    hearth!.llm.script({ toolCalls: [{ name, arguments: args }] }, { content: `called ${name}` });
    socket.send({ type: 'message', content: `Call ${name}` });
    const call = await socket.next('tool_call');
    expect(call.tool).toBe(name);
    await socket.next('stream_end');
    return call;
  } finally {
    socket.close();
  }
}

/** The tool names and temperature of the most recent request the scripted LLM received. */
function lastRequest(): { tools: string[]; temperature: unknown } {
  const body = hearth!.llm.requests.at(-1)!.body;
  return { tools: (body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name), temperature: body.options?.temperature };
}

describe('watching TOOLS_DIR', () => {
  it('loads a tool file written by hand, announces it on open sockets, and the model can call it', async () => {
    await start();
    const tools = await announced(() => writeFile(toolFile('greet.ts'), toolModule('greet', 'return `Hello, ${params.text}!`;')), has('greet'));
    expect(named('greet')(tools)).toMatchObject({ source: 'user', description: 'Test tool greet.' });

    expect(await callTool('greet')).toMatchObject({ success: true, result: 'Hello, ada!' });
    expect(hearth!.llm.requests.at(-2)!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('greet');
  });

  it('picks up an edit: the next call after tools_changed runs the new code', async () => {
    await start();
    await announced(() => writeFile(toolFile('greet.ts'), toolModule('greet', 'return `Hello, ${params.text}!`;')), has('greet'));
    expect(await callTool('greet')).toMatchObject({ success: true, result: 'Hello, ada!' });

    for (const [version, body] of [
      ['two', 'return `Hi, ${params.text}.`;'],
      ['three', 'return params.text.toUpperCase();'],
    ] as const) {
      await announced(
        () => writeFile(toolFile('greet.ts'), toolModule('greet', body, { description: JSON.stringify(`Greets, version ${version}.`) })),
        (tools) => named('greet')(tools)?.description === `Greets, version ${version}.`,
      );
    }
    expect(await callTool('greet')).toMatchObject({ success: true, result: 'ADA' });
  });

  it('reports a syntax error (with its line) and a throw at import in /agents/tools while the other tools keep working', async () => {
    await start();
    await announced(async () => {
      await writeFile(toolFile('good_tool.ts'), toolModule('good_tool', 'return `good ${params.text}`;'));
      await writeFile(
        toolFile('broken_syntax.ts'),
        `export const name = 'broken_syntax';\nexport const description = 'Never loads.';\nexport const parameters = { type: 'object', properties: {} };\nexport async function execute() { return 'x' +; }\n`,
      );
      await writeFile(toolFile('throws_at_import.ts'), `throw new Error('kaboom at import');\n${toolModule('throws_at_import', "return 'never';")}`);
    }, has('good_tool'));

    const body = await waitUntil(async () => {
      const { body } = await hearth!.request('GET', '/agents/tools');
      return body.errors.length === 2 && body;
    });
    const messageOf = (file: string) => body.errors.find((error: { file: string }) => error.file === file)?.message as string;
    expect(body.errors.map((error: { file: string }) => error.file)).toEqual(['broken_syntax.ts', 'throws_at_import.ts']);
    expect(messageOf('broken_syntax.ts')).toMatch(/line 4\b/);
    expect(messageOf('throws_at_import.ts')).toMatch(/kaboom at import/);
    const userTools = body.tools.filter((tool: ToolSummary) => tool.source === 'user');
    expect(userTools.filter((tool: { status: string }) => tool.status === 'loaded').map((tool: ToolSummary) => tool.name)).toEqual(['good_tool']);
    expect(userTools.filter((tool: { status: string }) => tool.status === 'failed').map((tool: ToolSummary) => tool.name)).toEqual(['broken_syntax', 'throws_at_import']);

    expect(await callTool('good_tool')).toMatchObject({ success: true, result: 'good ada' });

    // Fixing the broken file clears its error and loads it; the good tool is untouched.
    await announced(
      () => writeFile(toolFile('broken_syntax.ts'), toolModule('broken_syntax', "return 'fixed';")),
      has('broken_syntax'),
    );
    const { body: fixed } = await hearth!.request('GET', '/agents/tools');
    expect(fixed.errors.map((error: { file: string }) => error.file)).toEqual(['throws_at_import.ts']);
    expect(await callTool('good_tool')).toMatchObject({ success: true, result: 'good ada' });
  });

  it('removes the tool when its file is deleted', async () => {
    await start();
    await announced(() => writeFile(toolFile('greet.ts'), toolModule('greet', "return 'hello';")), has('greet'));
    expect(await callTool('greet')).toMatchObject({ success: true, result: 'hello' });

    await announced(() => unlink(toolFile('greet.ts')), (tools) => !has('greet')(tools));
    const { body } = await hearth!.request('GET', '/agents/tools');
    expect(body.tools.map((tool: ToolSummary) => tool.name)).not.toContain('greet');
    const call = await callTool('greet');
    expect(call.success).toBe(false);
    expect(call.result).toMatch(/no tool named "greet"/);
  });

  it('gives each generation fresh helper modules: editing _helper.ts changes the tool that imports it', async () => {
    await start();
    const helper = (version: string, decorate: string) =>
      `export const version = ${JSON.stringify(version)};\nexport function decorate(text: string): string { return ${decorate}; }\n`;
    const shout = toolModule('shout', 'return decorate(params.text.toUpperCase());', {
      prelude: `import { decorate, version } from './_helper.ts';`,
      description: '`Shouts (helper ${version}).`',
    });
    await announced(async () => {
      await writeFile(toolFile('_helper.ts'), helper('one', '`[${text}]`'));
      await writeFile(toolFile('shout.ts'), shout);
    }, (tools) => named('shout')(tools)?.description === 'Shouts (helper one).');
    expect(await callTool('shout')).toMatchObject({ success: true, result: '[ADA]' });

    await announced(
      () => writeFile(toolFile('_helper.ts'), helper('two', '`<<${text}>>`')),
      (tools) => named('shout')(tools)?.description === 'Shouts (helper two).',
    );
    expect(await callTool('shout')).toMatchObject({ success: true, result: '<<ADA>>' });
  });

  it('gives a hand-dropped user tool to every profile, and takes it away when enabled.json switches it off', async () => {
    await start();
    await announced(() => writeFile(toolFile('hidden_gem.ts'), toolModule('hidden_gem', 'return `gem ${params.text}`;')), has('hidden_gem'));
    // The watcher profile does not name it: it joins as a user tool that is switched on.
    expect(await callTool('hidden_gem')).toMatchObject({ success: true, result: 'gem ada' });
    expect(hearth!.llm.requests.at(-2)!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('hidden_gem');

    await announced(() => writeFile(toolFile('enabled.json'), JSON.stringify({ disabled: ['hidden_gem'] })));
    expect(await callTool('hidden_gem')).toMatchObject({ success: false, result: expect.stringMatching(/no tool named "hidden_gem"/) });
    expect(lastRequest().tools).not.toContain('hidden_gem');
  });
});

describe('watching SHIPPED_TOOLS_DIR beside TOOLS_DIR (issue 34)', () => {
  it('picks up an edit of a shipped tool, lets a same-named file in TOOLS_DIR replace it, and brings it back when that file goes', async () => {
    const shipped = await mkdtemp(path.join(tmpdir(), 'hearth-shipped-tools-'));
    onTestFinished(() => rm(shipped, { recursive: true, force: true }));
    const described = (description: string) => (tools: ToolSummary[]) => named('greet')(tools)?.description === description;
    await writeFile(path.join(shipped, 'greet.ts'), toolModule('greet', 'return `Shipped ${params.text}`;', { description: JSON.stringify('Shipped greeting.') }));
    hearth = await startApp({ profiles: { watcher: watcherProfile(0.1, profileTools) }, env: { SHIPPED_TOOLS_DIR: shipped } });
    announcements = await hearth.connect(await hearth.createSession('watcher'));
    await hearth.deps.userTools.whenLoaded();
    expect(await callTool('greet')).toMatchObject({ success: true, result: 'Shipped ada' });

    // An upgrade changes a shipped tool while Hearth runs.
    await announced(() => writeFile(path.join(shipped, 'greet.ts'), toolModule('greet', 'return `Shipped, upgraded ${params.text}`;', { description: JSON.stringify('Upgraded greeting.') })), described('Upgraded greeting.'));
    expect(await callTool('greet')).toMatchObject({ success: true, result: 'Shipped, upgraded ada' });

    await mkdir(hearth.config.TOOLS_DIR, { recursive: true });
    await announced(() => writeFile(toolFile('greet.ts'), toolModule('greet', 'return `Mine ${params.text}`;', { description: JSON.stringify('My greeting.') })), described('My greeting.'));
    expect(await callTool('greet')).toMatchObject({ success: true, result: 'Mine ada' });

    await announced(() => unlink(toolFile('greet.ts')), described('Upgraded greeting.'));
    expect(await callTool('greet')).toMatchObject({ success: true, result: 'Shipped, upgraded ada' });
    expect(await readdir(shipped)).toEqual(['greet.ts']);
  });
});

describe('watching PROFILES_DIR', () => {
  it('picks up a profile edit without a restart, and keeps the last good version of a broken edit', async () => {
    await start();
    await callTool('scratchpad', { action: 'read' });
    expect(lastRequest().temperature).toBe(0.1);

    const tools = await announced(() => writeFile(profileFile('watcher'), watcherProfile(0.9, profileTools)));
    expect(tools.map((tool) => tool.name)).toContain('scratchpad');
    await callTool('scratchpad', { action: 'read' });
    expect(lastRequest().temperature).toBe(0.9);

    // A broken edit: the profile keeps its last good version, and the error is reported.
    const good = await readFile(profileFile('watcher'), 'utf8');
    await announced(() => writeFile(profileFile('watcher'), good.replace('temperature: 0.9', 'temperature: [0.3')));
    const { body } = await hearth!.request('GET', '/agents/profiles');
    expect(body.errors).toEqual([
      { file: profileFile('watcher'), message: expect.stringMatching(/still using the last version that loaded/) },
    ]);
    expect(body.profiles.find((profile: { id: string }) => profile.id === 'watcher')).toMatchObject({ temperature: 0.9 });
    await callTool('scratchpad', { action: 'read' });
    expect(lastRequest().temperature).toBe(0.9);

    // Fixing it clears the error and the new values apply.
    await announced(() => writeFile(profileFile('watcher'), watcherProfile(0.4, profileTools)));
    const { body: fixed } = await hearth!.request('GET', '/agents/profiles');
    expect(fixed.errors).toEqual([]);
    expect(fixed.profiles.find((profile: { id: string }) => profile.id === 'watcher')).toMatchObject({ temperature: 0.4 });
  });
});
