import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHearth } from './support/hearth-server.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { builtStartCommand } from './support/hearth-build.ts';
import { prepareProfiles, startChildServer, type ChildServer } from './support/server-child.ts';
import { waitUntil } from './support/wait-until.ts';
import { testHomeFolders } from './support/test-home-folders.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dataFolder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hearth-start-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await prepareProfiles(dir);
  return dir;
}

/** Runs Hearth as `npm start` does (this run's build) until it exits on its own; stdout and stderr are not a terminal. */
async function runMainUntilExit(environment: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const start = builtStartCommand();
  // Run from a folder of its own with its own XDG folders: no .env of the checkout or of the person is read.
  const home = await mkdtemp(path.join(tmpdir(), 'hearth-start-home-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const child = spawn(start.executable, start.args, {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...testHomeFolders(home), ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

describe('start-up', () => {
  let first: ChildServer;

  it('a second Hearth on a port in use says so in one line and exits 1, leaving the first running', async () => {
    // The first runs in this process: only the second needs to be `npm start` as a child.
    const running = await startHearth();
    cleanups.push(() => running.close());
    const port = new URL(running.baseUrl).port;
    const other = await dataFolder();
    const { code, output } = await runMainUntilExit({ PORT: port, DATA_DIR: other, PROFILES_DIR: path.join(other, 'profiles') });
    expect(code).toBe(1);
    expect(output).toBe(`hearth: Cannot listen on 127.0.0.1:${port}: the port is in use. Stop the other server or set PORT.\n`);
    expect((await running.request('GET', '/health')).status).toBe(200);
  });

  it('a DATA_DIR that cannot be written says so in one line and exits 1', async () => {
    const dir = await dataFolder();
    const blocker = path.join(dir, 'not-a-folder');
    await writeFile(blocker, '');
    const dataDir = path.join(blocker, 'data');
    const { code, output } = await runMainUntilExit({ PORT: '0', DATA_DIR: dataDir, PROFILES_DIR: path.join(dir, 'profiles') });
    expect(code).toBe(1);
    expect(output).toBe(
      `hearth: Cannot write DATA_DIR ${dataDir}: part of the path is a file, not a folder. Choose a folder Hearth can write, or fix its permissions.\n`,
    );
  });

  it('logs JSON lines when the output is not a terminal, and a start-up summary once the backend has been checked', async () => {
    const ollama = await startScriptedOllama();
    cleanups.push(() => ollama.close());
    const dataDir = await dataFolder();
    first = await startChildServer(dataDir, { LOG_LEVEL: 'info', OLLAMA_HOST: ollama.url, OLLAMA_DEFAULT_MODEL: 'qwen3:8b' });
    cleanups.push(() => first.kill());
    const summary = await waitUntil(() => logLines(first.output()).find((line) => line.startup !== undefined), 20_000);
    expect(summary.startup).toEqual({
      url: first.baseUrl,
      data_dir: dataDir,
      backend: 'ollama',
      model: 'qwen3:8b',
      reachable: true,
      model_available: false,
      profiles: ['secretary', 'server_admin', 'smart_home'],
      tools: expect.any(Number),
      user_tool_errors: [],
      mcp_servers: [],
      jail: expect.stringMatching(/^(on|unavailable)$/),
      speech_to_text: 'none',
      text_to_speech: expect.stringMatching(/^(espeak-ng|none)$/),
    });
    expect(summary.msg).toContain(`Hearth is listening on ${first.baseUrl} · state in ${dataDir} · `);
    // The jail in a few words: its limits' mechanism, or what is off and the fix.
    expect(summary.msg).toMatch(/ · jail (on \(limits by (cgroup v1|cgroup v2|rlimits)\)|UNAVAILABLE, off: terminal, code_exec, user tools, stdio MCP servers \(fix: sudo [^)]+\))( · |$)/);
    expect(summary.msg).toContain('reachable, model missing');
    // Speech: what each side runs and how its first check went; STT is off unless configured.
    expect(summary.msg).toMatch(/ · speech: STT off, TTS (espeak-ng \((connected|failed)\)|off)( · |$)/);
    const advice = await waitUntil(() => logLines(first.output()).find((line) => line.level === 40 && String(line.msg).includes('ollama pull')));
    expect(advice.msg).toBe('Ollama has no model qwen3:8b. Run `ollama pull qwen3:8b`.');
  });
});

/** Every line of the output as JSON; a line that is not JSON fails the test. */
function logLines(output: string): Record<string, any>[] {
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}
