// Using Hearth never changes its checkout (issue 34): a clone of this repository with this run's
// build in its dist/, started from the clone as `npm start` starts it, with a HOME of its own and
// nothing configured, so every place of its state is a default. Every feature of the page that
// writes (a tool switched off, a tool written by the agent, an MCP server added, a profile edited,
// a file uploaded) is used over REST and the socket; then `git status` in the clone is clean and
// all of it is under ~/.local/share/hearth.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { EventSocket } from './support/event-socket.ts';
import { builtStartCommand } from './support/hearth-build.ts';
import { unusedPort } from './support/llm-helpers.ts';
import { everythingStdio, writeMcpConfig } from './support/mcp-servers.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { waitUntil } from './support/wait-until.ts';

const run = promisify(execFile);
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const wordCount = `export const name = 'word_count';
export const description = 'Count the words of a text.';
export const parameters = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false };
export async function execute(params: { text: string }) {
  return String(params.text.split(/\\s+/).filter(Boolean).length);
}
`;

/** A clone of this repository that runs this run's build as its own `dist/`: the clone is the installation. */
async function cloneWithBuild(root: string): Promise<{ checkout: string; main: string }> {
  const checkout = path.join(root, 'hearth');
  await run('git', ['clone', '--quiet', '--local', '--no-hardlinks', path.resolve('.'), checkout]);
  const start = builtStartCommand();
  const builtMain = start.args.find((arg) => arg.endsWith('main.mjs'))!;
  await cp(path.dirname(builtMain), path.join(checkout, 'dist'), { recursive: true });
  // A link to this checkout's packages; .gitignore's `node_modules/` names folders only, so the clone is told of the link itself.
  await symlink(path.resolve('node_modules'), path.join(checkout, 'node_modules'));
  await appendFile(path.join(checkout, '.git', 'info', 'exclude'), '/node_modules\n');
  return { checkout, main: path.join(checkout, 'dist', path.basename(builtMain)) };
}

async function listFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)));
}

describe('state outside the checkout', () => {
  it('after switching a tool, writing one, adding an MCP server, editing a profile and uploading a file, git status in the checkout is clean and the state is under DATA_DIR', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'hearth-clean-checkout-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const { checkout, main } = await cloneWithBuild(root);
    const home = path.join(root, 'home');
    await mkdir(home);
    const dataDir = path.join(home, '.local', 'share', 'hearth');
    const llm = await startScriptedOllama();
    cleanups.push(() => llm.close());

    const port = await unusedPort();
    const start = builtStartCommand();
    const child: ChildProcess = spawn(start.executable, start.args.map((arg) => (arg.endsWith('main.mjs') ? main : arg)), {
      cwd: checkout,
      // Nothing of the state configured: every place is the default one under HOME.
      env: { PATH: process.env.PATH, HOME: home, HOST: '127.0.0.1', PORT: String(port), OLLAMA_HOST: llm.url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (data: Buffer) => (output += data.toString()));
    child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
    const exited = once(child, 'exit');
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    const request = async (method: string, url: string, body?: unknown) => {
      const response = await fetch(baseUrl + url, { method, ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
    };
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`Hearth exited (${child.exitCode}): ${output}`);
      return (await request('GET', '/health').catch(() => undefined))?.status === 200;
    }, 30_000);

    // A profile edited: the person's copy in DATA_DIR/profiles replaces the shipped one, picked up while running.
    const shippedSecretary = await readFile(path.join(checkout, 'profiles', 'secretary.md'), 'utf8');
    await mkdir(path.join(dataDir, 'profiles'), { recursive: true });
    await writeFile(path.join(dataDir, 'profiles', 'secretary.md'), shippedSecretary.replace(/^planning_enabled: true$/m, 'planning_enabled: false'));
    await waitUntil(async () => (await request('GET', '/agents/profiles')).body.profiles.find((profile: { id: string }) => profile.id === 'secretary')?.planning_enabled === false, 15_000);

    // A shipped tool switched off.
    const userTool = async (name: string) =>
      (await request('GET', '/agents/tools')).body.tools.find((tool: { name: string; source: string }) => tool.source === 'user' && tool.name === name);
    await waitUntil(() => userTool('get_current_datetime'), 20_000);
    expect((await request('PUT', '/agents/tools/get_current_datetime/enabled', { enabled: false })).status).toBe(200);

    // A tool written by the agent, the person approving it.
    const sessionId = (await request('POST', '/sessions', { profile_id: 'secretary' })).body.session_id as string;
    const socket = await EventSocket.connect(`ws://127.0.0.1:${port}/ws/sessions/${sessionId}`);
    cleanups.push(async () => socket.close());
    llm.script({ toolCalls: [{ name: 'write_tool', arguments: { name: 'word_count', code: wordCount } }] }, { toolCalls: [{ name: 'word_count', arguments: { text: 'one two three' } }] }, { content: 'Done.' });
    socket.send({ type: 'message', content: 'Make a word counter and count "one two three".' });
    const approval = await socket.nextMatching((event) => event.type === 'approval_required', 'approval_required', 30_000);
    socket.send({ type: 'approve', call_id: (approval as { call_id: string }).call_id, decision: 'allow' });
    await socket.nextMatching((event) => event.type === 'stream_end', 'stream_end', 60_000);
    expect(socket.ofType('tool_call').map((call) => [call.tool, call.success, call.result])).toEqual([
      ['write_tool', true, expect.any(String)],
      ['word_count', true, '3'],
    ]);

    // A file uploaded to the session.
    const form = new FormData();
    form.append('file', new Blob(['shopping list']), 'list.txt');
    expect((await fetch(`${baseUrl}/sessions/${sessionId}/files`, { method: 'POST', body: form })).status).toBe(200);

    // An MCP server added: the person writes DATA_DIR/mcp.json, and Hearth picks it up while running.
    await writeMcpConfig(path.join(dataDir, 'mcp.json'), { everything: everythingStdio() });
    await waitUntil(async () => (await request('GET', '/agents/tools')).body.servers.some((server: { name: string }) => server.name === 'everything'), 20_000);

    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);

    expect((await run('git', ['-C', checkout, 'status', '--porcelain'])).stdout).toBe('');
    // Not even an ignored file appeared, apart from the build and node_modules this test put there.
    expect((await run('git', ['-C', checkout, 'status', '--porcelain', '--ignored'])).stdout.split('\n').filter(Boolean).sort()).toEqual(['!! dist/', '!! node_modules']);
    const state = await listFiles(dataDir);
    expect(state).toEqual(
      expect.arrayContaining(['hearth.db', 'mcp.json', 'profiles/secretary.md', 'user-tools/enabled.json', 'user-tools/word_count.ts', `session-files/${sessionId}/list.txt`]),
    );
    expect(JSON.parse(await readFile(path.join(dataDir, 'user-tools', 'enabled.json'), 'utf8'))).toEqual({ disabled: ['get_current_datetime'] });
  }, 120_000);
});
