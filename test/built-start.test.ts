// `npm start` runs the esbuild bundle in dist/ (built by `npm ci` through `prepare`), and
// deploy/hearth.service runs the same bundle under systemd. Both are exercised here as built.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { builtStartCommand, hearthBuildsFolder } from './support/hearth-build.ts';
import { unusedPort } from './support/llm-helpers.ts';
import { fixtureServer, writeMcpConfig } from './support/mcp-servers.ts';
import { prepareProfiles, startChildServer } from './support/server-child.ts';
import { waitUntil } from './support/wait-until.ts';
import { testHomeFolders } from './support/test-home-folders.ts';

const run = promisify(execFile);
const checkout = path.resolve('.');
const systemdAnalyze = '/usr/bin/systemd-analyze';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function temporaryFolder(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The node arguments of `npm start`, as package.json says them. */
function npmStartArguments(): string[] {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  const [command, ...rest] = manifest.scripts.start.split(/\s+/);
  expect(command).toBe('node');
  return rest;
}

/** `npm start`'s arguments with the bundle named from the checkout, for a server run from its data folder. */
function npmStartFromAnywhere(): string[] {
  return npmStartArguments().map((arg) => (arg === 'dist/main.js' ? path.resolve(checkout, arg) : arg));
}

/** The folders of a server started here: its data, and XDG folders of its own, so no .env of the checkout or the person is read. */
function folderEnvironment(dataDir: string): Record<string, string> {
  return {
    ...testHomeFolders(dataDir),
    DATA_DIR: dataDir,
    TOOLS_DIR: path.join(dataDir, 'user-tools'),
    MCP_CONFIG_FILE: path.join(dataDir, 'mcp.json'),
    SESSION_FILES_DIR: path.join(dataDir, 'session-files'),
  };
}

/**
 * The files of dist/ a start reads, with their text: main.js, the chunks it imports, and the
 * server's bundle, which it names and runs through V8 (src/load-built-start-server.ts).
 */
function modulesOfTheStart(): Map<string, string> {
  const reached = new Map<string, string>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    const text = readFileSync(path.join('dist', file), 'utf8');
    reached.set(file, text);
    for (const match of text.matchAll(/(?:from\s*|import\s*\(\s*)"\.\/([^"]+\.js)"|"(start-server-\w+\.cjs)"/g)) visit((match[1] ?? match[2])!);
  };
  visit('main.js');
  return reached;
}

/** The text of the server's bundle, `start-server-<hash>.cjs`, as main.js reaches it. */
function serverBundleText(): string {
  return [...modulesOfTheStart()].find(([file]) => file.startsWith('start-server-'))![1];
}

beforeAll(async () => {
  // The build `npm ci` runs (`prepare`), so the bundle tested is the one of these sources.
  await run('npm', ['run', '--silent', 'build'], { cwd: checkout });
}, 60_000);

describe('npm start (the bundle in dist/)', () => {
  it('runs dist/main.js without TypeScript and answers /health with 200', async () => {
    const args = npmStartArguments();
    expect(args).toContain('dist/main.js');
    expect(args.join(' ')).not.toMatch(/tsx|\.ts\b/);
    const dataDir = await temporaryFolder('hearth-built-');
    await prepareProfiles(dataDir);
    await cp('user-tools', path.join(dataDir, 'user-tools'), { recursive: true });
    const server = await startChildServer(dataDir, folderEnvironment(dataDir), { command: { executable: process.execPath, args: npmStartFromAnywhere() } });
    cleanups.push(() => server.kill());
    const health = await server.request('GET', '/health');
    expect(health.status).toBe(200);
    // The shipped user tools load: their host process is started from its script by path.
    const tools = await waitUntil(async () => {
      const { body } = await server.request('GET', '/agents/tools');
      return body.tools.some((tool: { name: string }) => tool.name === 'get_current_datetime') && body;
    }, 20_000);
    expect(tools.errors).toEqual([]);
    // The files it reads relative to itself are found from dist/ too: the page and the JSON worker.
    expect((await fetch(`${server.baseUrl}/`)).status).toBe(200);
    const session = await server.request('POST', '/sessions', { profile_id: 'secretary' });
    expect(session.status).toBe(201);
  });

  it('checks a profile with the validator the build compiled ahead, its errors worded as from the sources', async () => {
    const dataDir = await temporaryFolder('hearth-built-profile-');
    await prepareProfiles(dataDir, { many: '---\nid: many\ntemperature: -1\nmax_iterations: 1000\n---\nYou help with things.\n' });
    const server = await startChildServer(dataDir, folderEnvironment(dataDir), { command: { executable: process.execPath, args: npmStartFromAnywhere() } });
    cleanups.push(() => server.kill());
    const { body } = await server.request('GET', '/agents/profiles');
    expect(body.errors).toEqual([
      { file: path.join(dataDir, 'profiles', 'many.md'), message: 'missing required field "name"; temperature must be >= 0; max_iterations must be <= 500' },
    ]);
    expect(body.profiles.map((profile: { id: string }) => profile.id)).toContain('secretary');
    // Compiled ahead: the code of the check is in the bundle, its limits written into it.
    expect([...modulesOfTheStart().values()].some((text) => text.includes('message:"must be <= 500"'))).toBe(true);
  });

  it("checks a session's frames with the validators the build compiled ahead, its errors worded as from the sources", async () => {
    const dataDir = await temporaryFolder('hearth-built-frames-');
    await prepareProfiles(dataDir);
    const server = await startChildServer(dataDir, folderEnvironment(dataDir), { command: { executable: process.execPath, args: npmStartFromAnywhere() } });
    cleanups.push(() => server.kill());
    const { body } = await server.request('POST', '/sessions', { profile_id: 'secretary' });
    const socket = await server.connect(body.session_id);
    cleanups.push(async () => socket.socket.close());
    const refusals: string[] = [];
    for (const frame of [{ type: 'message' }, { type: 'message', content: 'Hello', extra: 1 }, { type: 'approve', call_id: 'call', decision: 'maybe' }, { type: 'edit', message_id: 0, content: 'Hello' }]) {
      socket.send(frame);
      refusals.push((await socket.next('error')).message);
    }
    expect(refusals).toEqual([
      "Invalid message frame: frame must have required property 'content'",
      'Invalid message frame: frame must NOT have additional properties',
      'Invalid approve frame: /decision must be equal to constant',
      'Invalid edit frame: /message_id must be >= 1',
    ]);
    // Compiled ahead: the module that compiles them at the first frame is not in the bundle.
    const bundle = serverBundleText();
    expect(bundle).toContain('validateMessageFrame');
    expect(bundle).not.toContain('validatorsCompiledOnFirstUse');
  });

  it('connects an MCP server through the SDK bundled beside the server, and words a wrong entry as the sources do', async () => {
    const dataDir = await temporaryFolder('hearth-built-mcp-');
    await prepareProfiles(dataDir);
    await writeMcpConfig(path.join(dataDir, 'mcp.json'), { helper: fixtureServer(), wrong: { url: 'ftp://files.example.com', arguments: [] } as never });
    const server = await startChildServer(dataDir, folderEnvironment(dataDir), { command: { executable: process.execPath, args: npmStartFromAnywhere() } });
    cleanups.push(() => server.kill());
    const listed = await waitUntil(async () => {
      const { body } = await server.request('GET', '/agents/tools');
      return body.servers.some((entry: { name: string; status: string }) => entry.name === 'helper' && entry.status === 'connected') && body;
    }, 20_000);
    expect(listed.servers.find((entry: { name: string }) => entry.name === 'helper').tools.length).toBeGreaterThan(0);
    expect(listed.errors).toEqual([{ file: 'mcp.json', server: 'wrong', message: 'unknown field "arguments"; "url" must be an http:// or https:// URL, not "ftp://files.example.com"' }]);
    // The SDK is the build's bundle beside the server's, not read from node_modules; its entries' validators were compiled ahead.
    const bundle = serverBundleText();
    expect(bundle).toContain('require("./mcp-sdk.cjs")');
    expect(bundle).not.toContain('"@modelcontextprotocol/sdk/');
    expect(bundle).toContain('validateStdioEntry');
    expect(bundle).not.toContain('validatorsCompiledOnFirstUse');
  });

  it('is plain ASCII in every module main.js reaches, so V8 keeps each source at one byte a character', async () => {
    const reached = modulesOfTheStart();
    for (const [file, text] of reached) {
      expect([...text.matchAll(/[^\x00-\x7f]/g)].map((match) => text.slice(match.index - 30, match.index + 10)), file).toEqual([]);
    }
    // The server's bundle, which holds its lazily imported integrations too, not only the entry.
    expect([...reached.keys()].filter((file) => file.startsWith('start-server-'))).toHaveLength(1);
  });

  it('names src/ files, not the bundle, in a stack trace', async () => {
    const dataDir = await temporaryFolder('hearth-built-');
    const notAFile = path.join(dataDir, 'hearth.db');
    await mkdir(notAFile);
    const child = spawn(process.execPath, npmStartFromAnywhere(), {
      cwd: dataDir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', ...folderEnvironment(dataDir), DB_PATH: notAFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/^\s+at openDatabase \(.*\/src\/store\/database\.ts:\d+:\d+\)$/m);
    expect(stderr).not.toMatch(/dist\/main\.js/);
  });
});

describe("the server's code cache", () => {
  /** A copy of this run's build (test/support/hearth-build-setup.ts) to damage, still inside the checkout, its package root. */
  async function copyOfTheBuild(): Promise<{ main: string; cacheFile: string }> {
    const { args } = builtStartCommand();
    const main = args.find((arg) => arg.endsWith(`${path.sep}main.mjs`))!;
    await mkdir(hearthBuildsFolder, { recursive: true });
    const folder = await mkdtemp(path.join(hearthBuildsFolder, 'code-cache-test-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    await cp(path.dirname(path.dirname(main)), folder, { recursive: true, verbatimSymlinks: true });
    const dist = path.join(folder, 'dist');
    const cache = (await readdir(dist)).filter((file) => file.endsWith('.code-cache'));
    expect(cache).toHaveLength(1);
    return { main: path.join(dist, 'main.mjs'), cacheFile: path.join(dist, cache[0]!) };
  }

  async function startFrom(main: string, environment: Record<string, string> = {}) {
    const dataDir = await temporaryFolder('hearth-code-cache-');
    await prepareProfiles(dataDir);
    const server = await startChildServer(dataDir, { ...folderEnvironment(dataDir), LOG_LEVEL: 'debug', LOG_FORMAT: 'json', ...environment }, { command: { executable: process.execPath, args: [main] } });
    cleanups.push(() => server.kill());
    expect((await server.request('GET', '/health')).status).toBe(200);
    return server;
  }

  it('is made by the build, named after the bundle it belongs to, and used by a start', async () => {
    const files = await readdir('dist');
    const bundle = files.find((file) => /^start-server-\w+\.cjs$/.test(file));
    expect(bundle).toBeDefined();
    expect(files).toContain(bundle!.replace(/\.cjs$/, '.code-cache'));
    const { main } = await copyOfTheBuild();
    expect((await startFrom(main)).output()).toContain("The start's code came compiled from the code cache the build made.");
  });

  it('damaged, fails its checksum: the server says so, compiles its code itself and serves', async () => {
    const { main, cacheFile } = await copyOfTheBuild();
    const cache = await readFile(cacheFile);
    const middle = cache.length >> 1;
    cache[middle] = cache[middle]! ^ 0xff;
    await writeFile(cacheFile, cache);
    const server = await startFrom(main);
    expect(server.output()).toMatch(/"level":40,.*"msg":"The start's code cache in dist\/ fails its checksum and was not used/);
    expect((await server.request('GET', '/agents/profiles')).status).toBe(200);
  });

  it('made with other node options, V8 refuses it: the server says how to make one that fits and serves', async () => {
    const { main } = await copyOfTheBuild();
    const server = await startFrom(main, { NODE_OPTIONS: '--max-old-space-size=400' });
    expect(server.output()).toMatch(/"level":30,.*"msg":"The start's code cache in dist\/ was made by another version of node or with other node options/);
    expect((await server.request('GET', '/agents/profiles')).status).toBe(200);
  });
});

describe('npm start, once idle', () => {
  it('gives back the memory start-up grew, and then still answers and shuts down on SIGTERM', async () => {
    const dataDir = await temporaryFolder('hearth-idle-');
    await prepareProfiles(dataDir);
    await cp('user-tools', path.join(dataDir, 'user-tools'), { recursive: true });
    const port = await unusedPort();
    const child = spawn(process.execPath, npmStartFromAnywhere(), {
      cwd: dataDir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'debug', LOG_FORMAT: 'json', OLLAMA_HOST: `http://127.0.0.1:${await unusedPort()}`, ...folderEnvironment(dataDir), PROFILES_DIR: path.join(dataDir, 'profiles') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let log = '';
    child.stdout.on('data', (data: Buffer) => (log += data.toString()));
    const exited = once(child, 'exit');
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    });
    const trimmed = await waitUntil(() => {
      const line = log.split('\n').find((candidate) => candidate.includes('gave memory back'));
      return line === undefined ? undefined : (JSON.parse(line) as { young_mb: [number, number]; rss_mb: [number, number] });
    }, 30_000);
    expect(trimmed.young_mb[1]).toBeLessThan(trimmed.young_mb[0]);
    expect(trimmed.rss_mb[1]).toBeLessThan(trimmed.rss_mb[0]);
    // A collection asked of the inspector once deadlocked the process (Node 20, a worker thread alive).
    const health = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5_000) });
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });
});

describe('LOG_FORMAT by where stdout goes', () => {
  /** Starts the bundle with stdout in a file, JOURNAL_STREAM naming that file or not; resolves with the log once it listens. */
  async function logOf(journalStreamMatches: boolean): Promise<string> {
    const dataDir = await temporaryFolder('hearth-log-');
    const logFile = path.join(dataDir, 'stdout.log');
    const descriptor = openSync(logFile, 'w');
    const { dev, ino } = fstatSync(descriptor);
    const port = await unusedPort();
    const child = spawn(process.execPath, npmStartFromAnywhere(), {
      cwd: dataDir,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'info',
        JOURNAL_STREAM: journalStreamMatches ? `${dev}:${ino}` : `${dev}:${ino + 1}`,
        ...folderEnvironment(dataDir),
      },
      stdio: ['ignore', descriptor, 'inherit'],
    });
    closeSync(descriptor);
    const exited = once(child, 'exit');
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    });
    return waitUntil(() => {
      const text = readFileSync(logFile, 'utf8');
      return /listening/i.test(text) && text;
    }, 30_000);
  }

  it('writes readable lines without colour codes or its own timestamp when stdout is the journal', async () => {
    const log = await logOf(true);
    expect(log).not.toContain('\u001b[');
    const lines = log.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(/^(INFO|WARN|ERROR|DEBUG)(?: \(\d+\))?: /);
    expect(lines.some((line) => /^INFO.*listening/i.test(line))).toBe(true);
  });

  it('writes JSON lines when JOURNAL_STREAM was inherited but stdout goes elsewhere', async () => {
    const log = await logOf(false);
    for (const line of log.trimEnd().split('\n')) expect(JSON.parse(line)).toHaveProperty('level');
  });
});

/** deploy/hearth.service with the install folder, state and configuration folders moved to real ones. */
function mappedUnit(folders: { install: string; state: string; configuration: string }): string {
  return readFileSync('deploy/hearth.service', 'utf8')
    .replaceAll('/opt/hearth', folders.install)
    .replaceAll('/var/lib/hearth', folders.state)
    .replaceAll('/etc/hearth', folders.configuration);
}

function unitValues(unit: string, key: string): string[] {
  return [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((match) => match[1]!.trim());
}

describe('deploy/hearth.service', () => {
  const unit = readFileSync('deploy/hearth.service', 'utf8');

  it('keeps out every option that would stop the jail from creating its namespaces', () => {
    // Each would stop bubblewrap creating the jail's namespaces or mounting its /proc (see the unit's comments).
    for (const key of ['RestrictNamespaces', 'PrivateUsers', 'SystemCallFilter', 'ProtectProc', 'ProcSubset', 'ProtectKernelTunables', 'ProtectKernelLogs', 'MemoryDenyWriteExecute', 'DynamicUser']) {
      expect(unitValues(unit, key), key).toEqual([]);
    }
    expect(unitValues(unit, 'NoNewPrivileges')).toEqual(['yes']);
    expect(unitValues(unit, 'ProtectSystem')).toEqual(['strict']);
    expect(unitValues(unit, 'ReadWritePaths')).toEqual(['/var/lib/hearth']);
    expect(unitValues(unit, 'Environment')).toContain('DATA_DIR=/var/lib/hearth');
  });

  // CI installs it and sets HEARTH_REQUIRE_SYSTEMD_ANALYZE=1, so there a missing one fails instead of skipping.
  it.skipIf(!existsSync(systemdAnalyze) && process.env.HEARTH_REQUIRE_SYSTEMD_ANALYZE !== '1')('passes systemd-analyze verify without a warning, with its paths pointing at real files', async () => {
    const dir = await temporaryFolder('hearth-unit-');
    const unitFile = path.join(dir, 'hearth.service');
    await writeFile(unitFile, mappedUnit({ install: checkout, state: dir, configuration: dir }));
    const { stdout, stderr } = await run(systemdAnalyze, ['verify', unitFile], { cwd: dir });
    expect(stderr).toBe('');
    expect(stdout).toBe('');
    // The check can fail: systemd ignores a misspelt key with a warning, which the test sees.
    await writeFile(unitFile, mappedUnit({ install: checkout, state: dir, configuration: dir }).replace('ProtectSystem=', 'ProtectSytem='));
    expect((await run(systemdAnalyze, ['verify', unitFile], { cwd: dir })).stderr).toMatch(/Unknown key 'ProtectSytem'/);
  });

  it('its ExecStart line, run with its environment in its working folder, answers /health with 200', async () => {
    const dir = await temporaryFolder('hearth-unit-');
    const state = path.join(dir, 'state');
    await mkdir(state);
    // The install folder stands in for /opt/hearth: the checkout's build, but not its `.env`, which is the person's.
    const install = path.join(dir, 'opt-hearth');
    await mkdir(install);
    await symlink(path.join(checkout, 'dist'), path.join(install, 'dist'));
    const mapped = mappedUnit({ install, state, configuration: path.join(dir, 'etc') });
    const [executable, ...args] = unitValues(mapped, 'ExecStart')[0]!.split(/\s+/);
    const environment = Object.fromEntries(
      unitValues(mapped, 'Environment').map((assignment) => [assignment.slice(0, assignment.indexOf('=')), assignment.slice(assignment.indexOf('=') + 1)]),
    );
    const command = { executable: existsSync(executable!) ? executable! : process.execPath, args };
    const cwd = unitValues(mapped, 'WorkingDirectory')[0]!;
    expect(cwd).toBe(install);
    // startChildServer points PROFILES_DIR into the data folder; the unit keeps the default (empty is unset), the shipped profiles.
    const server = await startChildServer(state, { ...environment, PROFILES_DIR: '' }, { command, cwd });
    cleanups.push(() => server.kill());
    expect((await server.request('GET', '/health')).status).toBe(200);
    // Everything it wrote is under the state folder (ReadWritePaths), nothing in the install folder.
    expect(existsSync(path.join(state, 'hearth.db'))).toBe(true);
  });
});
