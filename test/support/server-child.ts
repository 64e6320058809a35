// The real server as a child process, started the way `npm start` starts it (this run's build of
// src/, test/support/hearth-build.ts), so a test can kill it with SIGKILL mid-run and start
// another on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EventSocket } from './event-socket.ts';
import { builtStartCommand, type StartCommand } from './hearth-build.ts';
import { unusedPort } from './llm-helpers.ts';
import { testHomeFolders } from './test-home-folders.ts';
import { waitUntil } from './wait-until.ts';

export interface ChildServer {
  baseUrl: string;
  pid: number;
  /** Sends the AUTH_TOKEN the server was started with, if any. */
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
  connect(sessionId: string): Promise<EventSocket>;
  /** SIGKILL: no shutdown code runs, as in a crash or an OOM kill. */
  kill(): Promise<void>;
  /** SIGTERM: the server shuts down as it does when the person stops it; resolves once it exited. */
  terminate(): Promise<void>;
  output(): string;
}

/**
 * Copies the shipped profiles, planning off as in startHearth (so scripts answer the tool
 * loop directly), and `extraProfiles` (id → file text) into `dataDir/profiles`.
 */
export async function prepareProfiles(dataDir: string, extraProfiles: Record<string, string> = {}): Promise<string> {
  const profilesDir = path.join(dataDir, 'profiles');
  await mkdir(profilesDir, { recursive: true });
  for (const file of await readdir(path.resolve('profiles'))) {
    const text = await readFile(path.resolve('profiles', file), 'utf8');
    await writeFile(path.join(profilesDir, file), text.replace(/^planning_enabled: true$/m, 'planning_enabled: false'));
  }
  for (const [id, text] of Object.entries(extraProfiles)) await writeFile(path.join(profilesDir, `${id}.md`), text);
  return profilesDir;
}

/** src/main.ts through tsx, as `npm run dev` runs it: for a test about the sources or about running under tsx. */
export function sourcesStartCommand(): StartCommand {
  // Absolute, so that a working folder outside the checkout still finds tsx and the server.
  const tsxLoader = pathToFileURL(path.resolve('node_modules/tsx/dist/loader.mjs')).href;
  return { executable: process.execPath, args: ['--import', tsxLoader, path.resolve('src/main.ts')] };
}

export interface ChildServerOptions {
  /** The working folder (where `.env` is read); the data folder by default, so no `.env` of the checkout is read. */
  cwd?: string;
  /** Run the server as this user (test/support/unprivileged-user.ts) rather than the test's. */
  user?: { uid: number; gid: number; home: string };
  /** Open an IPC channel to the server, as a parent that forks it (or `tsx watch`) does. */
  ipc?: boolean;
  /** How to start it (e.g. sourcesStartCommand, a systemd unit's ExecStart); by default this run's build, as `npm start` does. */
  command?: StartCommand;
}

export async function startChildServer(dataDir: string, environment: Record<string, string>, options: ChildServerOptions = {}): Promise<ChildServer> {
  const port = await unusedPort();
  const command = options.command ?? builtStartCommand();
  const child: ChildProcess = spawn(command.executable, command.args, {
    cwd: options.cwd ?? dataDir,
    ...(options.user && { uid: options.user.uid, gid: options.user.gid }),
    env: {
      PATH: process.env.PATH,
      HOME: options.user?.home ?? process.env.HOME,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      PROFILES_DIR: path.join(dataDir, 'profiles'),
      TOOLS_DIR: path.join(dataDir, 'user-tools'),
      SHIPPED_TOOLS_DIR: path.join(dataDir, 'no-shipped-tools'),
      MCP_CONFIG_FILE: path.join(dataDir, 'mcp.json'),
      SESSION_FILES_DIR: path.join(dataDir, 'session-files'),
      ...testHomeFolders(dataDir),
      LOG_LEVEL: 'warn',
      ...environment,
    },
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? ['ipc' as const] : [])],
  });
  let output = '';
  child.stdout?.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr?.on('data', (data: Buffer) => (output += data.toString()));
  const exited = once(child, 'exit');
  const baseUrl = `http://127.0.0.1:${port}`;
  const request: ChildServer['request'] = async (method, url, body) => {
    const response = await fetch(baseUrl + url, {
      method,
      headers: {
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(environment.AUTH_TOKEN && { authorization: `Bearer ${environment.AUTH_TOKEN}` }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  try {
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${output}`);
      return (await request('GET', '/health').catch(() => undefined))?.status === 200;
      // Within the default test timeout (20 s), so a start that never answers is ended here, not left behind the test.
    }, 15_000);
  } catch (error) {
    // A server that never answered is not left running behind the failed test.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    throw error;
  }
  return {
    baseUrl,
    pid: child.pid!,
    request,
    connect: (sessionId) => EventSocket.connect(`${baseUrl.replace('http', 'ws')}/ws/sessions/${sessionId}`),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    terminate: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    output: () => output,
  };
}
