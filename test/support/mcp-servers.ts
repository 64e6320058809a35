import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseMcpConfig, type McpServerConfig } from '../../src/tools/mcp/mcp-config.ts';

/** One entry of mcp.json, as a person writes it. */
export type McpEntry = (
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string; jail?: false | { paths?: Record<string, 'ro' | 'rw'>; network?: boolean } }
  | { url: string; headers?: Record<string, string> }
) & { trusted?: boolean };

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

/** The script a package's `bin` runs, resolved in node_modules: started with `node`, never npx. */
function binOf(packageName: string): string {
  const manifestPath = require.resolve(`${packageName}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0];
  if (bin === undefined) throw new Error(`${packageName} has no bin`);
  return path.resolve(path.dirname(manifestPath), bin);
}

export const everythingScript = binOf('@modelcontextprotocol/server-everything');
export const filesystemScript = binOf('@modelcontextprotocol/server-filesystem');
export const fixtureScript = path.join(here, 'mcp-fixture-server.mjs');

/** The reference "everything" server over stdio. */
export function everythingStdio(): McpEntry {
  return { command: process.execPath, args: [everythingScript, 'stdio'] };
}

/** The reference filesystem server over stdio, allowed into `root` only (its jail shows it `root`, read-write). */
export function filesystemStdio(root: string): McpEntry {
  return { command: process.execPath, args: [filesystemScript, root], jail: { paths: { [root]: 'rw' } } };
}

export function missingCommand(): McpEntry {
  return { command: 'hearth-test-no-such-command' };
}

/** Prints why on stderr and exits with code 1 before answering initialize, as a server missing its API key does. */
export function exitsAtStart(): McpEntry {
  return { command: process.execPath, args: ['-e', 'console.error("Error: WEATHER_API_KEY is not set"); process.exit(1)'] };
}

/** Reads stdin and never answers. */
export function hangsAtInitialize(): McpEntry {
  return { command: process.execPath, args: ['-e', 'process.stdin.resume(); setInterval(() => {}, 1000)'] };
}

export interface FixtureOptions {
  /** File the server appends one JSON line to per message received and per aborted call. */
  log?: string;
  /** Answers tools/list in pages of this many tools. */
  pageSize?: number;
  /** Exits with code 3 this long after initialization. */
  crashAfterMs?: number;
  env?: Record<string, string>;
}

/** test/support/mcp-fixture-server.mjs over stdio. */
export function fixtureServer(options: FixtureOptions = {}): McpEntry {
  const env: Record<string, string> = { ...options.env };
  if (options.log !== undefined) env.FIXTURE_LOG = options.log;
  if (options.pageSize !== undefined) env.FIXTURE_PAGE_SIZE = String(options.pageSize);
  if (options.crashAfterMs !== undefined) env.FIXTURE_CRASH_AFTER_MS = String(options.crashAfterMs);
  return { command: process.execPath, args: [fixtureScript], env };
}

export interface FixtureLogEntry {
  pid: number;
  event: 'received' | 'sleeping' | 'aborted';
  method?: string;
  id?: number | string;
  requestId?: number | string;
  params?: Record<string, unknown>;
}

export async function readFixtureLog(file: string): Promise<FixtureLogEntry[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as FixtureLogEntry);
}

export async function writeMcpConfig(file: string, servers: Record<string, McpEntry>): Promise<void> {
  await writeFile(file, `${JSON.stringify({ mcpServers: servers }, null, 2)}\n`);
}

/** The connection settings of one entry, as MCP_CONFIG_FILE would give them. */
export function serverConfig(name: string, entry: McpEntry, dataDir = process.cwd()): McpServerConfig {
  const { servers, errors } = parseMcpConfig('mcp.json', JSON.stringify({ mcpServers: { [name]: entry } }), dataDir);
  const [server] = servers;
  if (!server) throw new Error(`not a valid entry: ${errors.map((error) => error.message).join('; ')}`);
  return server;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RunningHttpServer {
  /** The Streamable HTTP endpoint. */
  url: string;
  entry: McpEntry;
  pid: number;
  close(): Promise<void>;
}

/**
 * The reference "everything" server over Streamable HTTP, as a child process: it listens on
 * PORT (it prints the port it was given, so a free one is picked first unless `port` is given)
 * and is ready once it says it is listening.
 */
export async function startEverythingHttp(options: { port?: number } = {}): Promise<RunningHttpServer> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [everythingScript, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let printed = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
      if (printed.includes(`listening on port ${port}`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the everything server exited with code ${code}: ${printed}`)));
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  return { url, entry: { url }, pid: child.pid!, close: () => endChild(child) };
}

async function endChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** One JSON-RPC message a client sent through the recording proxy. */
export interface RecordedMessage {
  method?: string;
  id?: number | string;
  params?: Record<string, unknown>;
}

export interface RecordingProxy {
  url: string;
  /** Every JSON-RPC message POSTed through the proxy, in order. */
  received: RecordedMessage[];
  /** The headers of every request, in order. */
  headers: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** An HTTP proxy in front of a Streamable HTTP endpoint that records what the client sends on the wire. */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const targetUrl = new URL(target);
  const received: RecordedMessage[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((request, response) => {
    headers.push(request.headers);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      if (request.method === 'POST' && body.length > 0) {
        const parsed = JSON.parse(body.toString('utf8')) as RecordedMessage | RecordedMessage[];
        received.push(...(Array.isArray(parsed) ? parsed : [parsed]));
      }
      const forwarded = http.request(
        { host: targetUrl.hostname, port: targetUrl.port, path: request.url, method: request.method, headers: { ...request.headers, host: targetUrl.host } },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forwarded.on('error', () => response.destroy());
      response.on('close', () => forwarded.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${targetUrl.pathname}`,
    received,
    headers,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
