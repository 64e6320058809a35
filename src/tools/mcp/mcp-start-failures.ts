// How an MCP server's failure to start or to stay connected is worded: a message a person can act
// on (the command missing, the jail without network, npx offline, an HTTP status), with the last
// lines the server printed.
import type { ChildProcess } from 'node:child_process';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { jailedStartFailure } from '../../jail/jail.ts';
import type { McpServerConfig } from './mcp-config.ts';

/** What is known of the attempt that failed. */
export interface FailedAttempt {
  stderr: string;
  child?: ChildProcess;
  initializeTimeoutMs: number;
}

/** What is known of the server: its settings, whether a jail holds it, whether its npx package was prepared. */
export interface FailedServer {
  config: McpServerConfig;
  jailActive: boolean;
  npxPrepared: boolean;
}

/** Why an attempt did not connect, for the server's `failed` status. */
export function describeStartFailure(attempt: FailedAttempt, error: unknown, server: FailedServer): string {
  if (error instanceof StartFailure) return error.message;
  const { config } = server;
  if (config.transport === 'http') {
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return `did not answer initialize within ${seconds(attempt.initializeTimeoutMs)}`;
    return describeHttpFailure(config.url, error);
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `command not found: ${config.command}`;
  if (code === 'EACCES') return `command cannot be run (permission denied): ${config.command}`;
  // Inside a jail, bubblewrap is what was spawned, and outside one setsid: they say so when the command is missing.
  const jailed = jailedStartFailure(attempt.stderr);
  const unjailed = unjailedStartFailure(attempt.stderr);
  if (jailed === 'ENOENT' || unjailed === 'ENOENT') return `command not found: ${config.command}`;
  if (jailed === 'EACCES') return `command cannot be run (permission denied, inside its jail): ${config.command}`;
  if (unjailed === 'EACCES') return `command cannot be run (permission denied): ${config.command}`;
  const printed = lastLines(attempt.stderr);
  if (notCached.test(attempt.stderr)) {
    return `npx could not reach the registry: the package is not prepared in Hearth's npm cache; the next attempt fetches it again${printed ? `; it printed: ${printed}` : ''}`;
  }
  const offline = networkHint(attempt, server);
  // Checked before the exit: the SDK closes stdin after a timeout, and a server may exit on that.
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return `did not answer initialize within ${seconds(attempt.initializeTimeoutMs)}${printed ? `; it printed: ${printed}` : ''}${offline}`;
  }
  // The transport reports the close after the child's exit, so a server that exited at start has its status set.
  const exit = describeExit(attempt, 'exited at start');
  if (exit !== undefined) return `${exit}${offline}`;
  return `${(error as Error).message}${printed ? `; it printed: ${printed}` : ''}`;
}

/**
 * A note for a jailed server without network that failed to start: if it tried to reach the
 * network (or printed nothing), that is the likely reason, which a bare timeout would hide.
 */
function networkHint(attempt: FailedAttempt, { config, jailActive, npxPrepared }: FailedServer): string {
  if (config.transport !== 'stdio' || config.jail === false || config.jail.network || !jailActive) return '';
  const triedNetwork = /EAI_AGAIN|ENOTFOUND|ENETUNREACH|ECONNREFUSED|getaddrinfo|fetch failed|network/i.test(attempt.stderr);
  // A prepared npx server that printed nothing is slow to start offline, not missing the network.
  if (!triedNetwork && (attempt.stderr.trim() !== '' || npxPrepared)) return '';
  return `. Its jail has no network${triedNetwork ? ' and it tried to reach one' : ''}: a server that needs the network at run time needs "jail": {"network": true} in its entry`;
}

/** `exited with code 1: <stderr>` once the child has exited; undefined while it runs. */
export function describeExit(attempt: FailedAttempt, verb: string): string | undefined {
  const child = attempt.child;
  if (!child || (child.exitCode === null && child.signalCode === null)) return undefined;
  const how = child.exitCode !== null ? `${verb} with code ${child.exitCode}` : `${verb} on signal ${child.signalCode}`;
  const printed = lastLines(attempt.stderr);
  return printed ? `${how}: ${printed}` : how;
}

/** Why setsid could not start the command, read from its stderr. */
function unjailedStartFailure(stderr: string): 'ENOENT' | 'EACCES' | undefined {
  const line = /^setsid: failed to execute [^\n]*/m.exec(stderr)?.[0];
  if (line === undefined) return undefined;
  if (line.includes('No such file or directory')) return 'ENOENT';
  if (line.includes('Permission denied')) return 'EACCES';
  return undefined;
}

/** What offline npx prints when the cache lacks what it needs. */
export const notCached = /ENOTCACHED|only-if-cached/;

/** A failure described before the SDK is involved. */
export class StartFailure extends Error {}

function seconds(milliseconds: number): string {
  return `${Math.round(milliseconds / 100) / 10} s`;
}

/** The last few lines a server wrote to stderr, on one line. */
function lastLines(text: string): string {
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
  const tail = lines.slice(-3).join(' / ');
  return tail.length > 400 ? `…${tail.slice(-400)}` : tail;
}

/** The URL without its query (which may carry a key) for messages. */
export function describeEndpoint(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

export function describeHttpFailure(url: string, error: unknown): string {
  const endpoint = describeEndpoint(url);
  if (error instanceof StreamableHTTPError && typeof error.code === 'number') {
    if (error.code === 401 || error.code === 403) return `${endpoint} answered HTTP ${error.code}: check the "headers" (an Authorization token?)`;
    if (error.code === 404) return `${endpoint} answered HTTP 404: check the "url" (Streamable HTTP endpoints often end in /mcp)`;
    return `${endpoint} answered HTTP ${error.code}: ${error.message.replace(/^Streamable HTTP error: /, '')}`;
  }
  const cause = (error as { cause?: NodeJS.ErrnoException }).cause;
  const code = cause?.code ?? (error as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED') return `cannot reach ${endpoint}: connection refused (is the server running?)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot reach ${endpoint}: host not found`;
  if (code === 'ECONNRESET') return `cannot reach ${endpoint}: the connection was reset`;
  return `cannot reach ${endpoint}: ${(cause ?? (error as Error)).message}`;
}
