import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { createDependencies, type AppDependencies } from '../../src/app-dependencies.ts';
import type { Channel } from '../../src/channels/channel.ts';
import { parseConfig, type Config } from '../../src/config.ts';
import { Jail } from '../../src/jail/jail.ts';
import type { Logger } from '../../src/logger.ts';
import type { Clock } from '../../src/time/clock.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { EventSocket } from './event-socket.ts';
import { jailFor } from './jail.ts';
import type { ScriptedLlm } from './scripted-llm.ts';
import { startScriptedOllama } from './scripted-ollama.ts';
import { startScriptedOpenAI } from './scripted-openai.ts';
import { seedDatabase } from './template-database.ts';

export interface HearthOptions {
  backend?: 'ollama' | 'openai';
  env?: Record<string, string>;
  /** Extra tools registered beside the built-ins. */
  tools?: Tool[];
  /** Extra profile files: id → whole file text. */
  profiles?: Record<string, string>;
  /** Reuse a data folder (restart tests); it is then not removed on close. */
  dataDir?: string;
  /** Reuse a scripted LLM; it is then not closed on close. */
  llm?: ScriptedLlm;
  /** Keep the shipped profiles' planning phase (off by default so scripts answer the tool loop directly). */
  planning?: boolean;
  /** Listen on this port instead of a free one (restart tests reuse the previous app's port). */
  port?: number;
  /** The clock schedules run by (the system's otherwise). */
  clock?: Clock;
  /** The environment the jail looks for bubblewrap and pasta in (a PATH without bwrap makes it unavailable). */
  jailEnvironment?: NodeJS.ProcessEnv;
  /** Channels registered beside the page (docs/architecture.md, Adding a channel). */
  channels?: Channel[];
  /** The app's logger (tests that read what was logged); a silent one otherwise. */
  logger?: Logger;
  /** How long importing one user-tool module may take; the default 10 s otherwise (checked in test/internals/user-tool-host.test.ts). */
  userToolLoadTimeoutMs?: number;
}

export interface Hearth {
  app: FastifyInstance;
  /** What the app was built from, for tests that look inside (the routes get only their part). */
  deps: AppDependencies;
  config: Config;
  llm: ScriptedLlm;
  baseUrl: string;
  dataDir: string;
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  createSession(profileId?: string): Promise<string>;
  connect(sessionId: string, query?: string, headers?: Record<string, string>): Promise<EventSocket>;
  close(): Promise<void>;
}

/**
 * scrypt at 1/32 of the shipped cost (test/internals/household-accounts.test.ts checks that one):
 * the shipped cost's 0.1 s of CPU a hash or sign-in, hundreds of times a run, tests nothing more.
 */
const testPassphraseCost = { N: 2 ** 10, r: 8, p: 1 };

/** The real app on port 0 with its data in a temp folder, talking to a scripted LLM server. */
export async function startHearth(options: HearthOptions = {}): Promise<Hearth> {
  const backend = options.backend ?? 'ollama';
  const llm = options.llm ?? (backend === 'ollama' ? await startScriptedOllama() : await startScriptedOpenAI());
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'hearth-test-')));
  const profilesDir = path.join(dataDir, 'profiles');
  await mkdir(profilesDir, { recursive: true });
  for (const file of await readdir(path.resolve('profiles'))) {
    const text = await readFile(path.resolve('profiles', file), 'utf8');
    await writeFile(path.join(profilesDir, file), options.planning ? text : text.replace(/^planning_enabled: true$/m, 'planning_enabled: false'));
  }
  for (const [id, text] of Object.entries(options.profiles ?? {})) await writeFile(path.join(profilesDir, `${id}.md`), text);

  const config = parseConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    PROFILES_DIR: profilesDir,
    TOOLS_DIR: path.join(dataDir, 'user-tools'),
    // A folder that is not there: no shipped example tool joins a test's tools unless the test puts it in TOOLS_DIR.
    SHIPPED_TOOLS_DIR: path.join(dataDir, 'no-shipped-tools'),
    MCP_CONFIG_FILE: path.join(dataDir, 'mcp.json'),
    SESSION_FILES_DIR: path.join(dataDir, 'session-files'),
    LOG_LEVEL: 'silent',
    LLM_BACKEND: backend,
    OLLAMA_HOST: backend === 'ollama' ? llm.url : 'http://127.0.0.1:9',
    ...(backend === 'openai' && { OPENAI_BASE_URL: llm.url, OPENAI_MODEL: 'scripted-model' }),
    ...options.env,
  });
  // The machine's jail facts are probed once a worker (test/support/jail.ts), not at each of the ~1,000 starts.
  const jail = options.jailEnvironment
    ? await Jail.create({ config, logger: { warn: () => undefined, info: () => undefined }, environment: options.jailEnvironment })
    : jailFor(config);
  if (config.DB_PATH !== ':memory:') await seedDatabase(config.DB_PATH);
  const deps = await createDependencies(config, {
    ...(options.clock && { clock: options.clock }),
    jail,
    ...(options.logger && { logger: options.logger }),
    ...(options.userToolLoadTimeoutMs !== undefined && { userToolLoadTimeoutMs: options.userToolLoadTimeoutMs }),
    passphraseCost: testPassphraseCost,
  });
  if (options.tools) deps.tools.addBuiltins(options.tools);
  const app = await buildApp(config, deps, { ...(options.channels && { channels: options.channels }) });
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  await app.started;
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const baseUrl = `http://127.0.0.1:${address.port}`;

  const request: Hearth['request'] = async (method, url, body, headers = {}) => {
    const response = await fetch(baseUrl + url, {
      method,
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };

  return {
    app,
    deps,
    config,
    llm,
    baseUrl,
    dataDir,
    request,
    async createSession(profileId) {
      const { status, body } = await request('POST', '/sessions', profileId ? { profile_id: profileId } : {});
      if (status !== 201) throw new Error(`create session: ${status} ${JSON.stringify(body)}`);
      return body.session_id as string;
    },
    connect: (sessionId, query = '', headers = {}) =>
      EventSocket.connect(`${baseUrl.replace('http', 'ws')}/ws/sessions/${sessionId}${query}`, headers),
    async close() {
      await app.close();
      if (!options.llm) await llm.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers one afterEach in the calling test file that closes every Hearth started through the returned function
 * during the test: `const start = useHearth();` at the top, then `const hearth = await start({...})` in a test.
 * Closing a Hearth early (restart tests) is fine: each is closed once. Hooks run last-registered first, so call it
 * after a file's own afterEach when that one removes what the app uses (a folder, a stand-in it talks to).
 */
export function useHearth(): (options?: HearthOptions) => Promise<Hearth> {
  let hearths: Hearth[] = [];
  afterEach(async () => {
    const closing = hearths;
    hearths = [];
    await Promise.all(closing.map((hearth) => hearth.close()));
  });
  return async (options = {}) => {
    const hearth = closedOnce(await startHearth(options));
    hearths.push(hearth);
    return hearth;
  };
}

/** The same Hearth whose close() closes it the first time and gives that same promise after. */
export function closedOnce(started: Hearth): Hearth {
  let closing: Promise<void> | undefined;
  return { ...started, close: () => (closing ??= started.close()) };
}
