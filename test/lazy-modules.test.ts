// The clients of integrations a person has not configured are never loaded (issue 26: each
// costs 100-300 ms of start-up and memory on a small machine). The server runs as a child with
// a hook recording every module it resolves; the same hook sees each client load once its
// integration is configured, so an empty record cannot pass for a lazy one.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { unusedPort } from './support/llm-helpers.ts';
import { builtStartCommand, type StartCommand } from './support/hearth-build.ts';
import { documentFolder } from './support/document-files.ts';
import { fixtureServer, writeMcpConfig } from './support/mcp-servers.ts';
import { startMosquitto } from './support/mosquitto.ts';
import { prepareProfiles, startChildServer, type ChildServer } from './support/server-child.ts';
import { waitUntil } from './support/wait-until.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The packages of each integration (and of the page) that the server must not load unasked. */
const clients = {
  mcp: '@modelcontextprotocol/sdk',
  mqtt: 'mqtt',
  homeAssistant: 'home-assistant-js-websocket',
  telegram: 'grammy',
  web: 'linkedom',
  readability: '@mozilla/readability',
  highlight: 'highlight.js',
  marked: 'marked',
  dompurify: 'dompurify',
  // The OpenAI client, for LLM_BACKEND=openai and the openai speech backends; Hearth's own OpenAI-compatible routes need none.
  openai: 'openai',
  // Readable log lines, for a terminal or the journal; JSON output needs none.
  pretty: 'pino-pretty',
  // The document readers (issue 39): a Word document's and an e-mail's, loaded when one is first read.
  docx: 'mammoth',
  email: 'postal-mime',
};

/**
 * The packages the server loads before it listens, with nothing configured (issue 38: the start's
 * budget is its load): those scripts/build.mjs bundles into dist/, and the ones it leaves in
 * node_modules. A new one is a decision: can it wait for the first request that needs it?
 */
const bundledAtStart: string[] = JSON.parse(readFileSync('scripts/bundled-packages.json', 'utf8')).packages;
/** Native (better-sqlite3 and what finds its binary, koffi), or required by a name esbuild cannot see (js-yaml's esprima: from src/ only, the build drops that require). */
const unbundledAtStart = ['better-sqlite3', 'bindings', 'file-uri-to-path', 'koffi', 'esprima'];

interface RecordedServer {
  server: ChildServer;
  dataDir: string;
  /** The packages whose modules the server has resolved so far, or only before it started listening. */
  loadedPackages(beforeListen?: 'before listen'): Promise<Set<string>>;
}

/** src/main.ts through tsx, where every package resolves from node_modules, or `built`: `npm start`'s dist/main.js. */
async function startRecorded(
  environment: Record<string, string>,
  prepare: (dataDir: string) => Promise<void> = async () => {},
  start: 'sources' | 'built' = 'sources',
): Promise<RecordedServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-lazy-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  await prepareProfiles(dataDir);
  await mkdir(path.join(dataDir, 'user-tools'), { recursive: true });
  await writeFile(path.join(dataDir, 'user-tools', 'enabled.json'), '{"disabled": []}\n');
  await prepare(dataDir);
  const record = path.join(dataDir, 'modules.txt');
  const recorder = `${pathToFileURL(path.resolve('test/support/module-load-recorder.mjs')).href}?record=${encodeURIComponent(record)}`;
  const tsxLoader = pathToFileURL(path.resolve('node_modules/tsx/dist/loader.mjs')).href;
  const built = builtStartCommand();
  const command: StartCommand = start === 'sources'
    ? { executable: process.execPath, args: ['--import', tsxLoader, '--import', recorder, path.resolve('src/main.ts')] }
    : { executable: built.executable, args: ['--import', recorder, ...built.args] };
  const server = await startChildServer(dataDir, environment, { command });
  cleanups.push(() => server.kill());
  return {
    server,
    dataDir,
    loadedPackages: async (beforeListen) => {
      const lines = await readFile(record, 'utf8');
      const listened = lines.search(/^\d+ listen$/m);
      if (beforeListen) expect(listened).toBeGreaterThan(0);
      const packages = (beforeListen ? lines.slice(0, listened) : lines).matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/.][^/]*)\//g);
      return new Set([...packages].map((match) => match[1]!));
    },
  };
}

async function integrationStatus(server: ChildServer, name: string): Promise<string | undefined> {
  const { body } = await server.request('GET', '/integrations');
  return body.integrations.find((integration: { name: string }) => integration.name === name)?.status;
}

it('starting with nothing configured loads only the allowed packages before listening and none of the clients; naming an MCP server in mcp.json later loads the SDK, and the first Word document and e-mail their readers', async () => {
  // An entry that names no usable server: the file is read (its error is listed) and still nothing connects.
  const { server, dataDir, loadedPackages } = await startRecorded({}, (dataDir) =>
    writeFile(path.join(dataDir, 'mcp.json'), JSON.stringify({ mcpServers: { unfinished: {} } })),
  );
  await waitUntil(async () => (await server.request('GET', '/agents/tools')).body.errors.some((error: { server?: string }) => error.server === 'unfinished'), 20_000);
  expect(await integrationStatus(server, 'mqtt')).toBe('not_configured');
  expect(await integrationStatus(server, 'home_assistant')).toBe('not_configured');
  // The page's libraries are served, not loaded: highlight.js is bundled from its files by esbuild.
  expect((await fetch(`${server.baseUrl}/vendor/highlight.js`)).status).toBe(200);
  expect((await fetch(`${server.baseUrl}/vendor/marked.js`)).status).toBe(200);

  const atStart = await loadedPackages();
  const allowed = new Set([...bundledAtStart, ...unbundledAtStart]);
  expect([...(await loadedPackages('before listen'))].filter((name) => !allowed.has(name))).toEqual([]);
  // The recorder saw the server's own start: what it always loads is there.
  expect(atStart).toContain('fastify');
  expect(atStart).toContain('kysely');
  expect(atStart).toContain('esbuild');
  expect(Object.values(clients).filter((name) => atStart.has(name))).toEqual([]);

  await writeMcpConfig(path.join(dataDir, 'mcp.json'), { helper: fixtureServer() });
  await waitUntil(async () => (await server.request('GET', '/agents/tools')).body.servers?.[0]?.status === 'connected', 20_000);
  expect(await loadedPackages()).toContain(clients.mcp);

  // The document readers load with the first document of their kind (the text is split before any embedding).
  const files = await documentFolder();
  cleanups.push(() => files.remove());
  const split = async (file: { path: string; name: string }) => {
    const response = await fetch(`${server.baseUrl}/documents?name=${encodeURIComponent(file.name)}&library=household`, { method: 'POST', body: await readFile(file.path) });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: string };
    await waitUntil(async () => (await server.request('GET', `/documents/${id}`)).body.passages > 0, 20_000);
  };
  await split(await files.docx('contract.docx', [{ heading: 'Rent', paragraphs: ['Due on the first.'] }]));
  expect(await loadedPackages()).toContain(clients.docx);
  expect(await loadedPackages()).not.toContain(clients.email);
  await split(await files.email('school.eml', { subject: 'Parents evening', from: 'office@school.example', to: 'me@home.example', text: 'Thursday at six.' }));
  expect(await loadedPackages()).toContain(clients.email);
}, 60_000);

it('with MQTT_URL, HA_URL, an openai speech backend and LOG_FORMAT=pretty set, their clients are loaded, and only theirs', async () => {
  const broker = await startMosquitto();
  cleanups.push(() => broker.close());
  const homeAssistantUrl = `http://127.0.0.1:${await unusedPort()}`;
  const { server, loadedPackages } = await startRecorded({
    MQTT_URL: broker.url,
    HA_URL: homeAssistantUrl,
    HA_TOKEN: 'a-token',
    STT_BACKEND: 'openai',
    STT_URL: `http://127.0.0.1:${await unusedPort()}/v1`,
    LOG_FORMAT: 'pretty',
  });
  await waitUntil(async () => (await integrationStatus(server, 'mqtt')) === 'connected', 20_000);
  // Nothing answers at HA_URL: the attempt fails after the client was loaded to make it.
  await waitUntil(async () => (await integrationStatus(server, 'home_assistant')) === 'failed', 20_000);

  const loaded = await loadedPackages();
  expect(Object.values(clients).filter((name) => loaded.has(name))).toEqual([clients.mqtt, clients.homeAssistant, clients.openai, clients.pretty]);
}, 60_000);

it('the built start reads from node_modules, before it listens, only the packages left out of the bundle', async () => {
  const { server, loadedPackages } = await startRecorded({}, async () => {}, 'built');
  expect((await server.request('GET', '/health')).status).toBe(200);
  const beforeListen = await loadedPackages('before listen');
  // Recorded: the native database is loaded from its package.
  expect(beforeListen).toContain('better-sqlite3');
  expect([...beforeListen].filter((name) => !unbundledAtStart.includes(name))).toEqual([]);
}, 60_000);
