// Shared by the jail tests (issue 23): the real server started the way a person starts it — a
// shell above it carrying the person's exported secrets, its own environment holding secrets,
// and a `.env` with different secret values in the folder it runs from — talking to a scripted
// model, so each attack of the issue can be replayed as the model would make it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chown, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { EventOf } from '../../src/protocol/events.ts';
import { EventSocket } from '../support/event-socket.ts';
import { builtStartCommand } from '../support/hearth-build.ts';
import { unusedPort } from '../support/llm-helpers.ts';
import type { ScriptedLlm, ScriptedToolCall } from '../support/scripted-llm.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';
import { prepareProfiles } from '../support/server-child.ts';
import { waitUntil } from '../support/wait-until.ts';
import { hearthAddresses, type AttackTargets, type Findings } from './jail-attack-programs.ts';
import { toolModule, type ToolFile } from './user-tools-harness.ts';
import { testHomeFolders } from '../support/test-home-folders.ts';

const run = promisify(execFile);

function secret(label: string): string {
  return `${label}-${randomBytes(6).toString('hex')}`;
}

/** Every secret value the server or the shell above it holds; none may reach a tool result or the model. */
export interface Secrets {
  environment: Record<string, string>;
  dotEnv: Record<string, string>;
  /** Exported in the shell above Hearth only (as `npm start` leaves npm and a shell above it). */
  parent: Record<string, string>;
}

export function makeSecrets(): Secrets {
  return {
    environment: {
      AUTH_TOKEN: secret('env-auth-token'),
      OPENAI_API_KEY: secret('sk-env-openai'),
      HA_TOKEN: secret('env-ha-token'),
      MQTT_PASSWORD: secret('env-mqtt-password'),
    },
    dotEnv: {
      AUTH_TOKEN: secret('dotenv-auth-token'),
      OPENAI_API_KEY: secret('sk-dotenv-openai'),
      HA_TOKEN: secret('dotenv-ha-token'),
      MQTT_PASSWORD: secret('dotenv-mqtt-password'),
    },
    parent: { PERSON_EXPORTED_SECRET: secret('parent-exported') },
  };
}

export function secretValues(secrets: Secrets): string[] {
  return [...Object.values(secrets.environment), ...Object.values(secrets.dotEnv), ...Object.values(secrets.parent)];
}

export interface JailedHearthOptions {
  /** Extra profile files: id → text. */
  profiles?: Record<string, string>;
  /** User-tool modules (name → module) and other TOOLS_DIR files (permissions.json), there before start. */
  userTools?: Record<string, ToolFile>;
  toolFiles?: Record<string, string>;
  /** mcp.json's text. */
  mcpConfig?: unknown;
  /** Folders copied into the data folder before start: their name there → the folder copied. */
  dataFolders?: Record<string, string>;
  environment?: Record<string, string>;
  /** The PATH Hearth runs with (a folder without bwrap simulates a machine without bubblewrap). */
  path?: string;
  /** Run Hearth as this user (its folders are given to it). */
  user?: { uid: number; gid: number; home: string };
  /** The address Hearth listens on; `::` (every address, both families) by default, so any spelling of the machine reaches it from outside a jail. */
  host?: string;
  /**
   * Run the shell and Hearth in a terminal of their own, as a person starting Hearth in theirs: a
   * pseudo-terminal from util-linux `script`, the shell its session leader, the terminal Hearth's
   * controlling terminal and standard descriptors. `output()` is then what the terminal showed,
   * echoed input included.
   */
  terminal?: boolean;
}

export interface JailedHearth {
  baseUrl: string;
  port: number;
  /** Hearth's own process and the shell above it. */
  pid: number;
  parentPid: number;
  /** The folder Hearth runs from, holding `.env`; and its data folder. */
  projectDir: string;
  dataDir: string;
  sessionFilesDir: string;
  toolsDir: string;
  secrets: Secrets;
  llm: ScriptedLlm;
  token: string;
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
  createSession(profileId: string): Promise<string>;
  connect(sessionId: string): Promise<EventSocket>;
  output(): string;
  close(): Promise<void>;
}

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

async function giveTo(folder: string, user: { uid: number; gid: number }): Promise<void> {
  await chown(folder, user.uid, user.gid);
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const child = path.join(folder, entry.name);
    if (entry.isDirectory()) await giveTo(child, user);
    else await chown(child, user.uid, user.gid);
  }
}

/**
 * Hearth as `npm start` runs it (this run's build of src/), run by `sh -c` (the shell stays
 * above it, as npm does) in a project folder of its own that holds `.env`. The shell carries the
 * person's secrets; Hearth's environment its own. AUTH_TOKEN is set, so the API needs it.
 */
export async function startJailedHearth(options: JailedHearthOptions = {}): Promise<JailedHearth> {
  const secrets = makeSecrets();
  const llm = await startScriptedOllama();
  const root = await mkdtemp(path.join(tmpdir(), 'hearth-jail-'));
  const projectDir = path.join(root, 'project');
  const dataDir = path.join(root, 'data');
  const toolsDir = path.join(dataDir, 'user-tools');
  const sessionFilesDir = path.join(dataDir, 'session-files');
  await mkdir(projectDir, { recursive: true });
  await mkdir(toolsDir, { recursive: true });
  await writeFile(path.join(projectDir, '.env'), Object.entries(secrets.dotEnv).map(([name, value]) => `${name}=${value}\n`).join(''));
  await prepareProfiles(dataDir, options.profiles);
  for (const [name, tool] of Object.entries(options.userTools ?? {})) await writeFile(path.join(toolsDir, `${name}.ts`), toolModule(name, tool));
  for (const [file, text] of Object.entries(options.toolFiles ?? {})) await writeFile(path.join(toolsDir, file), text);
  if (options.mcpConfig !== undefined) await writeFile(path.join(dataDir, 'mcp.json'), JSON.stringify(options.mcpConfig));
  // System cp: an npm cache holds thousands of files, which fs.cp copies ten times slower.
  for (const [name, source] of Object.entries(options.dataFolders ?? {})) await run('cp', ['-R', source, path.join(dataDir, name)]);
  if (options.user) {
    await giveTo(root, options.user);
  }

  const port = await unusedPort();
  const token = secrets.environment.AUTH_TOKEN!;
  const hearthEnvironment: Record<string, string> = {
    PATH: options.path ?? process.env.PATH ?? '/usr/bin:/bin',
    HOME: options.user?.home ?? process.env.HOME ?? '/root',
    HOST: options.host ?? '::',
    PORT: String(port),
    DATA_DIR: dataDir,
    PROFILES_DIR: path.join(dataDir, 'profiles'),
    TOOLS_DIR: toolsDir,
    SHIPPED_TOOLS_DIR: path.join(dataDir, 'no-shipped-tools'),
    MCP_CONFIG_FILE: path.join(dataDir, 'mcp.json'),
    SESSION_FILES_DIR: sessionFilesDir,
    ...testHomeFolders(root),
    LOG_LEVEL: 'warn',
    LLM_BACKEND: 'ollama',
    OLLAMA_HOST: llm.url,
    ...secrets.environment,
    ...options.environment,
  };
  const exports = Object.keys(hearthEnvironment).map((name) => `${name}="$HEARTH_${name}"`).join(' ');
  // The shell stays above Hearth (no exec), carrying PERSON_EXPORTED_SECRET as npm start's shell would.
  const start = builtStartCommand();
  const script = `env -i ${exports} ${[start.executable, ...start.args].map((word) => `"${word}"`).join(' ')}; exit $?`;
  const shellEnvironment: Record<string, string> = { PATH: hearthEnvironment.PATH!, ...secrets.parent };
  for (const [name, value] of Object.entries(hearthEnvironment)) shellEnvironment[`HEARTH_${name}`] = value;
  const [command, args] = options.terminal ? ['script', ['--quiet', '--flush', '--return', '--command', script, '/dev/null']] : ['/bin/sh', ['-c', script]];
  const launcher: ChildProcess = spawn(command, args, {
    cwd: projectDir,
    env: shellEnvironment,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user && { uid: options.user.uid, gid: options.user.gid }),
  });
  let output = '';
  launcher.stdout?.on('data', (data: Buffer) => (output += data.toString()));
  launcher.stderr?.on('data', (data: Buffer) => (output += data.toString()));
  const exited = once(launcher, 'exit');
  // Under `script`, the shell is its child.
  const shellPid = options.terminal
    ? await waitUntil(async () => (await childrenOf(launcher.pid!))[0]).catch(() => launcher.pid!)
    : launcher.pid!;
  const baseUrl = `http://127.0.0.1:${port}`;
  const request: JailedHearth['request'] = async (method, url, body) => {
    const response = await fetch(baseUrl + url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  const stop = async () => {
    if (launcher.exitCode === null && launcher.signalCode === null) {
      for (const child of await childrenOf(shellPid)) process.kill(child, 'SIGTERM');
      await exited;
    }
  };
  try {
    await waitUntil(async () => {
      if (launcher.exitCode !== null) throw new Error(`the server exited (${launcher.exitCode}): ${output}`);
      return (await request('GET', '/health').catch(() => undefined))?.status === 200;
    }, 60_000);
  } catch (error) {
    for (const child of await childrenOf(shellPid)) process.kill(child, 'SIGKILL');
    await rm(root, { recursive: true, force: true });
    await llm.close();
    throw error;
  }
  // Hearth may restart itself (without secrets in its environment): the node process now under the shell.
  const [pid] = await waitUntil(async () => {
    const children = await childrenOf(shellPid);
    return children.length === 1 ? children : undefined;
  });

  return {
    baseUrl,
    port,
    pid: pid!,
    parentPid: shellPid,
    projectDir,
    dataDir,
    sessionFilesDir,
    toolsDir,
    secrets,
    llm,
    token,
    request,
    async createSession(profileId) {
      const { status, body } = await request('POST', '/sessions', { profile_id: profileId });
      if (status !== 201) throw new Error(`create session: ${status} ${JSON.stringify(body)}`);
      return body.session_id as string;
    },
    connect: (sessionId) => EventSocket.connect(`${baseUrl.replace('http', 'ws')}/ws/sessions/${sessionId}`, { authorization: `Bearer ${token}` }),
    output: () => output,
    async close() {
      await stop();
      await llm.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** One turn: the scripted model makes the calls, then answers; gives the calls' results in order. */
export async function callTools(
  hearth: JailedHearth,
  socket: EventSocket,
  calls: ScriptedToolCall[],
  options: { timeoutMs?: number; allowAsked?: boolean } = {},
): Promise<EventOf<'tool_call'>[]> {
  const before = socket.ofType('tool_call').length;
  hearth.llm.script({ toolCalls: calls }, { content: 'Done.' });
  // The person allows whatever the rules ask about: what is tested is what the jail lets a command reach.
  const onAsked = (data: unknown) => {
    const event = JSON.parse(String(data)) as { type?: string; call_id?: string };
    if (event.type === 'approval_required') socket.send({ type: 'approve', call_id: event.call_id, decision: 'allow' });
  };
  if (options.allowAsked) socket.socket.on('message', onAsked);
  try {
    socket.send({ type: 'message', content: 'Do it.' });
    expect((await socket.next('stream_end', options.timeoutMs ?? 60_000)).content).toBe('Done.');
  } finally {
    socket.socket.off('message', onAsked);
  }
  return socket.ofType('tool_call').slice(before);
}

/** Stores a private message in a session of its own (the model answers plainly), so it sits in the database and its WAL. */
export async function storePrivateMessage(hearth: JailedHearth, text: string): Promise<void> {
  const sessionId = await hearth.createSession('secretary');
  const socket = await hearth.connect(sessionId);
  hearth.llm.script({ content: 'Noted.' });
  socket.send({ type: 'message', content: text });
  await socket.next('stream_end', 30_000);
  socket.close();
}

/**
 * No secret value and no text of another session in any tool result, nor in any request the
 * model received from `fromRequest` on (earlier requests belong to the session that holds the text).
 */
export function expectNothingLeaked(hearth: JailedHearth, results: readonly EventOf<'tool_call'>[], fromRequest: number, privateText: string[] = []): void {
  const forbidden = [...secretValues(hearth.secrets), ...privateText];
  const toolText = JSON.stringify(results);
  const modelText = JSON.stringify(hearth.llm.requests.slice(fromRequest).map((request) => request.body));
  for (const value of forbidden) {
    expect(toolText, `a tool result holds ${value}`).not.toContain(value);
    expect(modelText, `a request to the model holds ${value}`).not.toContain(value);
  }
}

/**
 * What an attack program found of Hearth: none of its files read, none of its addresses answering
 * over HTTP, and its process and the one above it at the nice values taken before the attack.
 */
export async function expectHearthUnreached(hearth: JailedHearth, findings: Findings, targets: AttackTargets, niceBefore: number[]): Promise<void> {
  for (const file of [targets.envFile, targets.database, targets.wal]) expect(findings.reads[file], file).toMatch(/^error/);
  for (const [address, outcome] of Object.entries(findings.http)) expect(outcome, address).toMatch(/^error/);
  expect(Object.keys(findings.http)).toHaveLength(hearthAddresses().length);
  expect([await niceOf(hearth.pid), await niceOf(hearth.parentPid)]).toEqual(niceBefore);
}

/** The nice value of a process (field 19 of /proc/<pid>/stat). */
export async function niceOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** A profile with the given tools and no approvals block: the gate allows every call, only the jail stands in the way. */
export function attackerProfile(tools: string[]): string {
  return `---\nid: attacker\nname: Attacker\ndescription: Runs what it is asked.\nmax_iterations: 12\nplanning_enabled: false\ntools: [${tools.join(', ')}]\n---\nYou run what you are asked to.\n`;
}

/** User tools load after start: waits until GET /agents/tools lists each name, as a tool or as an error. */
export async function waitForUserTools(hearth: JailedHearth, names: string[]): Promise<any> {
  return await waitUntil(async () => {
    const { body } = await hearth.request('GET', '/agents/tools');
    const text = JSON.stringify(body);
    return names.every((name) => text.includes(name)) ? body : undefined;
  }, 30_000);
}

/** What an attack program aims at in a running Hearth: its process, the one above it, its port and its files. */
export function hearthTargets(hearth: JailedHearth): Pick<AttackTargets, 'hearthPid' | 'parentPid' | 'port' | 'envFile' | 'database' | 'wal'> {
  return {
    hearthPid: hearth.pid,
    parentPid: hearth.parentPid,
    port: hearth.port,
    envFile: path.join(hearth.projectDir, '.env'),
    database: path.join(hearth.dataDir, 'hearth.db'),
    wal: path.join(hearth.dataDir, 'hearth.db-wal'),
  };
}

/** A Unix socket the test listens on in a folder of its own, outside every jail; counts the connections it gets. */
export interface ForeignSocket {
  folder: string;
  socket: string;
  connections(): number;
  close(): Promise<void>;
}

export async function listenOnForeignSocket(): Promise<ForeignSocket> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-foreign-'));
  const socket = path.join(folder, 'socket');
  let connections = 0;
  const server = createServer((connection) => {
    connections += 1;
    connection.destroy();
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    folder,
    socket,
    connections: () => connections,
    close: async () => {
      server.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
