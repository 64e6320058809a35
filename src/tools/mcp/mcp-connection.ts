import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Jail } from '../../jail/jail.ts';
import type { JailedCommand } from '../../jail/jail-spec.ts';
import { endProcessTree } from '../../jail/process-tree.ts';
import { mcpJailSpec, usesNpm } from './mcp-jail.ts';
import { describeEndpoint, describeExit, describeHttpFailure, describeStartFailure, notCached, StartFailure } from './mcp-start-failures.ts';
import { npxPackages, preparedMarker, prepareNpxPackages, type NpxPreparation } from './npx-preparation.ts';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool as McpToolDefinition,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../logger.ts';
import { hearthInstance, processMarkerVariable, signalCallProcesses } from '../process-markers.ts';
import { toolEnvironment } from '../tool-environment.ts';
import type { McpServerConfig } from './mcp-config.ts';
import { version } from '../../version.ts';

export type McpConnectionState = 'connecting' | 'connected' | 'failed';

/** Waits between attempts: `firstMs`, doubling up to `longestMs`. */
export interface McpBackoff {
  firstMs: number;
  longestMs: number;
}

export interface McpConnectionOptions {
  config: McpServerConfig;
  /** HEARTH_PROCESS of a stdio server and everything it starts (see mcpProcessMarker). */
  processMarker: string;
  /**
   * How long the server has to answer `initialize` (and each `tools/list`); 10 s when absent.
   * After each attempt that ran out of it, the next has twice as long, up to four times.
   */
  initializeTimeoutMs?: number;
  /** 1 s doubling to 60 s when absent. */
  backoff?: McpBackoff;
  logger?: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** The jail a stdio server runs in, with what its entry grants; unjailed when absent or for `"jail": false`. */
  jail?: Jail;
  /** The npm cache of a server started through npx or npm (`mcpNpmCache`); npm's default, `~/.npm`, when absent. */
  npmCache?: string;
}

export interface McpCallOptions {
  signal: AbortSignal;
  timeoutMs: number;
}

const clientInfo = { name: 'hearth', title: 'Hearth', version };
const defaultInitializeTimeoutMs = 10_000;
/** A server that ran out of time starting (npx on a slow or busy machine) gets up to this many times as long. */
const longestInitializeFactor = 4;
const defaultBackoff: McpBackoff = { firstMs: 1_000, longestMs: 60_000 };
/** How long ending a stdio server waits for it to exit after SIGKILL before it moves on. */
const exitWaitMs = 2_000;
/** How long ending an HTTP session waits for the server to acknowledge it. */
const sessionEndWaitMs = 1_000;
const stderrKept = 4_000;

/**
 * The marker of one MCP server's processes: `<instance>:mcp:<server>.<random>`. Like a tool call's
 * marker, it passes to everything the server starts; Hearth's start ends whatever a previous run
 * left behind with it.
 */
export function mcpProcessMarker(dataDir: string, server: string): string {
  return `${hearthInstance(dataDir)}:mcp:${server}.${randomBytes(6).toString('hex')}`;
}

interface Attempt {
  client: Client;
  transport: Transport;
  /** The stdio server's process, from the moment it is spawned. */
  child?: ChildProcess;
  /** Resolves once the child has exited (or could not be spawned). */
  exited?: Promise<void>;
  stderr: string;
  connected: boolean;
  /** Ended on purpose (close, a failure already handled): a close of its transport is no news. */
  ended: boolean;
  listing: boolean;
  listAgain: boolean;
  /** How long this attempt waits for `initialize` (and each `tools/list`). */
  initializeTimeoutMs: number;
  /** Frees what the server's jail holds (its network namespace) once the server is gone. */
  releaseJail?: () => void;
}

/**
 * Hearth's connection to one MCP server through the official SDK client, over stdio or Streamable
 * HTTP. It reports `connecting`, then `connected` with the server's tools or `failed` with a
 * message a person can act on; lists the tools again on `notifications/tools/list_changed`; and
 * after a failure or a lost connection tries again with backoff until it is closed. A stdio
 * server sees only a safe environment plus its configured `env`, and is ended with everything it
 * started when the connection ends. `changed` is emitted after each change of state, message or
 * tools.
 */
export class McpConnection extends EventEmitter<{ changed: [] }> {
  readonly name: string;
  private currentState: McpConnectionState = 'connecting';
  private currentMessage: string | undefined;
  private currentTools: McpToolDefinition[] = [];
  private attempt: Attempt | undefined;
  private readonly endings = new Set<Promise<void>>();
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  /** Attempts in a row that ran out of time for `initialize`: the next one waits longer. */
  private initializeTimeouts = 0;
  private connectedAt = 0;
  private started = false;
  private closed = false;
  private readonly initializeTimeoutMs: number;
  private readonly backoff: McpBackoff;
  /** The registry an npx server's packages were prepared from, which its offline npx must name too. */
  private npxRegistry: string | undefined;
  /** Ends an npm still fetching when the connection is closed. */
  private readonly preparation = new AbortController();

  constructor(private readonly options: McpConnectionOptions) {
    super();
    this.name = options.config.name;
    this.initializeTimeoutMs = options.initializeTimeoutMs ?? defaultInitializeTimeoutMs;
    this.backoff = options.backoff ?? defaultBackoff;
  }

  get config(): McpServerConfig {
    return this.options.config;
  }

  get state(): McpConnectionState {
    return this.currentState;
  }

  /** Why it failed, or what it is doing while connecting (fetching an npx package); undefined otherwise. */
  get message(): string | undefined {
    return this.currentMessage;
  }

  /** The server's tools while connected (tools that must run as tasks left out); none otherwise. */
  get tools(): readonly McpToolDefinition[] {
    return this.currentTools;
  }

  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    const child = this.attempt?.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Starts connecting in the background; the outcome arrives as `changed`. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.connect();
  }

  /**
   * Calls one tool. An abort of `signal` or the end of `timeoutMs` makes the SDK send the server
   * `notifications/cancelled` for the request and rejects at once.
   */
  async callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<CallToolResult> {
    const attempt = this.attempt;
    if (this.currentState !== 'connected' || !attempt?.connected) {
      throw new Error(`The MCP server ${this.name} is not connected${this.currentMessage ? `: ${this.currentMessage}` : ''}.`);
    }
    // The SDK never removes its abort listener from the signal it is given: a signal of its own per
    // call, linked to the caller's only while the call runs, keeps a later abort of the caller's
    // signal (its timeout fires after the call) from cancelling a request long answered.
    const callSignal = new AbortController();
    const forwardAbort = () => callSignal.abort(options.signal.reason);
    if (options.signal.aborted) forwardAbort();
    else options.signal.addEventListener('abort', forwardAbort, { once: true });
    try {
      const result = await attempt.client.callTool({ name, arguments: args }, undefined, { signal: callSignal.signal, timeout: options.timeoutMs });
      return result as CallToolResult;
    } catch (error) {
      // An abort, a timeout (McpError RequestTimeout) or a closed connection (ConnectionClosed) reach the tool as the SDK words them.
      if (this.options.config.transport === 'http' && isLostHttpConnection(error)) {
        this.lost(attempt, `lost the connection: ${describeHttpFailure(this.options.config.url, error)}`);
        throw new Error(`The MCP server ${this.name} cannot be reached: ${describeHttpFailure(this.options.config.url, error)}.`, { cause: error });
      }
      throw error;
    } finally {
      options.signal.removeEventListener('abort', forwardAbort);
    }
  }

  /** Stops retrying and ends the connection; a stdio server and whatever it started are gone when this resolves. */
  async close(): Promise<void> {
    this.closed = true;
    this.preparation.abort();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const attempt = this.attempt;
    // A server still starting gets no grace: it has nothing to finish.
    if (attempt) this.end(attempt, attempt.connected ? 'graceful' : 'kill');
    while (this.endings.size > 0) await Promise.all([...this.endings]);
  }

  private async connect(): Promise<void> {
    const refusal = this.jailRefusal();
    if (refusal !== undefined) {
      // The jail is probed once per start: trying again would not change the answer.
      this.options.logger?.warn(`MCP server ${this.name} not started: ${refusal}`);
      this.set('failed', refusal);
      return;
    }
    if (!(await this.prepareNpx()) || this.closed) return;
    let jailed: JailedCommand | undefined;
    try {
      jailed = await this.jailedCommand();
    } catch (error) {
      this.fail(undefined, `its jail could not be set up: ${(error as Error).message}`);
      return;
    }
    if (this.closed) {
      jailed?.release();
      return;
    }
    const attempt = this.newAttempt(jailed);
    this.attempt = attempt;
    try {
      await this.checkWorkingFolder();
      if (attempt.ended) return;
      await attempt.client.connect(attempt.transport, { timeout: attempt.initializeTimeoutMs });
      if (attempt.ended) return;
      await this.listTools(attempt);
    } catch (error) {
      if (attempt.ended) return;
      const message = describeStartFailure(attempt, error, { config: this.options.config, jailActive: this.options.jail?.active === true, npxPrepared: this.npxRegistry !== undefined });
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) this.initializeTimeouts += 1;
      if (notCached.test(attempt.stderr)) this.forgetPreparation();
      this.fail(attempt, message);
      return;
    }
    if (attempt.ended) return;
    attempt.connected = true;
    this.initializeTimeouts = 0;
    this.connectedAt = Date.now();
    this.options.logger?.info({ tools: this.currentTools.length }, `MCP server ${this.name} connected`);
    this.set('connected', undefined);
  }

  /** Why a stdio server that asks for a jail may not start: the machine has none and JAIL=off is not set. */
  private jailRefusal(): string | undefined {
    const { config, jail } = this.options;
    if (config.transport !== 'stdio' || jail === undefined || config.jail === false) return undefined;
    return jail.refusal(`The stdio MCP server ${this.name}`);
  }

  /**
   * An npx server's packages, fetched into Hearth's npm cache with network before the server
   * starts in its jail without (npx-preparation.ts); false when that failed (the status says why).
   */
  private async prepareNpx(): Promise<boolean> {
    const config = this.options.config;
    if (config.transport !== 'stdio' || this.options.npmCache === undefined || this.npxRegistry !== undefined) return true;
    const packages = npxPackages(config);
    const npmCache = this.npmCache();
    if (packages === undefined || npmCache === undefined) return true;
    const ownSettings = Object.entries(config.env).filter(([name]) => /^npm_config_/i.test(name));
    const outcome = await prepareNpxPackages({
      config,
      packages,
      npmCache,
      // The server's marker: an npm left fetching by a Hearth that died is ended at the next start with the rest.
      environment: { ...this.baseEnvironment(), ...Object.fromEntries(ownSettings), [processMarkerVariable]: this.options.processMarker },
      onFetching: () => this.set('connecting', `preparing: npm is fetching ${packages.join(', ')} into Hearth's npm cache (once, with network; then it runs offline in its jail)`),
      signal: this.preparation.signal,
    }).catch((error: unknown): NpxPreparation => ({ prepared: false, message: `preparing its npx package failed: ${(error as Error).message}` }));
    if (this.closed) return false;
    if (!outcome.prepared) {
      // npm at every retry, for a name the registry does not have, would cost a second of CPU a minute for nothing.
      if (outcome.lasting === true) this.fail(undefined, `${outcome.message}. Correct the package's name in mcp.json: saving it tries again`, { retry: false });
      else this.fail(undefined, outcome.message);
      return false;
    }
    this.npxRegistry = outcome.registry;
    if (this.currentMessage !== undefined) this.set('connecting', undefined);
    return true;
  }

  /** The cache lost what was prepared (emptied by hand): the next attempt fetches it again. */
  private forgetPreparation(): void {
    const config = this.options.config;
    const packages = config.transport === 'stdio' ? npxPackages(config) : undefined;
    const npmCache = this.npmCache();
    if (packages !== undefined && npmCache !== undefined && this.npxRegistry !== undefined) rmSync(preparedMarker(npmCache, packages, this.npxRegistry), { force: true });
    this.npxRegistry = undefined;
  }

  /** A stdio server's command inside its jail (docs/security.md, *The jail*), or undefined to run it as configured. */
  private async jailedCommand(): Promise<JailedCommand | undefined> {
    const { config, jail } = this.options;
    if (config.transport !== 'stdio' || jail?.active !== true) return undefined;
    const spec = mcpJailSpec(config, this.npmCache());
    if (spec === undefined) return undefined;
    return jail.wrap(config.command, config.args, spec, this.childEnvironment());
  }

  private newAttempt(jailed: JailedCommand | undefined): Attempt {
    const config = this.options.config;
    const client = new Client(clientInfo, { capabilities: {} });
    const transport =
      config.transport === 'stdio'
        ? new StdioClientTransport({
            // Unjailed, it still gets a session of its own (setsid), so it has no controlling terminal to type into.
            command: jailed?.executable ?? 'setsid',
            args: jailed?.args ?? [config.command, ...config.args],
            env: (jailed?.environment as Record<string, string> | undefined) ?? this.childEnvironment(),
            ...(config.cwd !== undefined && { cwd: config.cwd }),
            stderr: 'pipe',
          })
        : new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    const attempt: Attempt = {
      client,
      transport,
      stderr: '',
      connected: false,
      ended: false,
      listing: false,
      listAgain: false,
      initializeTimeoutMs: this.initializeTimeoutMs * Math.min(2 ** this.initializeTimeouts, longestInitializeFactor),
      ...(jailed && { releaseJail: () => jailed.release() }),
    };
    if (transport instanceof StdioClientTransport) this.watchChild(attempt, transport);

    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (attempt.listing) attempt.listAgain = true;
      else if (attempt.connected && !attempt.ended) {
        void this.listTools(attempt).catch((error: unknown) => {
          if (!attempt.ended) this.options.logger?.warn({ err: error }, `listing the tools of the MCP server ${this.name} again failed; the previous list stays`);
        });
      }
    });
    client.onclose = () => {
      if (attempt.connected && !attempt.ended) this.lost(attempt, describeExit(attempt, 'exited') ?? 'closed the connection');
    };
    client.onerror = (error) => {
      this.options.logger?.debug({ err: error }, `MCP server ${this.name}: ${error.message}`);
      // The HTTP transport gives up on the server's event stream after its own retries.
      if (config.transport === 'http' && /Maximum reconnection attempts|Failed to reconnect/.test(error.message) && attempt.connected && !attempt.ended) {
        this.lost(attempt, `lost the connection to ${describeEndpoint(config.url)}`);
      }
    };
    return attempt;
  }

  /**
   * The server's stderr is the transport's public stream, there before the child starts. Its exit
   * status, which tells a person why a server stopped, is not: the SDK keeps the child private
   * and forgets it on close, so the child is taken at spawn.
   */
  private watchChild(attempt: Attempt, transport: StdioClientTransport): void {
    transport.stderr?.on('data', (chunk: Buffer) => {
      attempt.stderr = (attempt.stderr + chunk.toString('utf8')).slice(-stderrKept);
      this.options.logger?.debug({ stderr: chunk.toString('utf8').trimEnd() }, `MCP server ${this.name} wrote to stderr`);
    });
    const start = transport.start.bind(transport);
    transport.start = () => {
      const starting = start();
      const child = (transport as unknown as { _process?: ChildProcess })._process;
      if (child) {
        attempt.child = child;
        attempt.exited = new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.once('error', () => {
            if (child.pid === undefined) resolve();
          });
        });
      }
      return starting;
    };
  }

  /** Never the server's own environment (AUTH_TOKEN, API keys): the safe base, the server's `env`, and the marker. */
  private childEnvironment(): Record<string, string> {
    const config = this.options.config;
    const npmCache = this.npmCache();
    return {
      ...this.baseEnvironment(),
      // Prepared, npx runs from the cache alone: without network it would wait on the registry past initialize's timeout.
      ...(this.npxRegistry !== undefined && { npm_config_offline: 'true', npm_config_registry: this.npxRegistry, npm_config_update_notifier: 'false' }),
      ...(config.transport === 'stdio' ? config.env : {}),
      ...(npmCache !== undefined && { npm_config_cache: npmCache }),
      [processMarkerVariable]: this.options.processMarker,
    };
  }

  /** The safe base every spawned process gets (PATH, HOME, the locale…). */
  private baseEnvironment(): Record<string, string> {
    const environment: Record<string, string> = {};
    for (const [name, value] of Object.entries(toolEnvironment(''))) if (value !== undefined) environment[name] = value;
    return environment;
  }

  /** The npm cache an npx or npm server uses (made on first use), or undefined for other servers. */
  private npmCache(): string | undefined {
    const { config, npmCache } = this.options;
    if (config.transport !== 'stdio' || npmCache === undefined || !usesNpm(config)) return undefined;
    mkdirSync(npmCache, { recursive: true, mode: 0o700 });
    return npmCache;
  }

  private async checkWorkingFolder(): Promise<void> {
    const config = this.options.config;
    if (config.transport !== 'stdio' || config.cwd === undefined) return;
    const found = await stat(config.cwd).catch(() => undefined);
    if (!found?.isDirectory()) throw new StartFailure(`its working folder (cwd) does not exist: ${config.cwd}`);
  }

  /** Lists every page of tools, again for as long as `list_changed` arrives meanwhile. */
  private async listTools(attempt: Attempt): Promise<void> {
    attempt.listing = true;
    try {
      do {
        attempt.listAgain = false;
        const definitions = await this.fetchTools(attempt);
        if (attempt.ended) return;
        this.currentTools = definitions;
        if (attempt.connected) this.emit('changed');
      } while (attempt.listAgain && !attempt.ended);
    } finally {
      attempt.listing = false;
    }
  }

  private async fetchTools({ client, initializeTimeoutMs }: Attempt): Promise<McpToolDefinition[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: McpToolDefinition[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: initializeTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
      // A server that hands out a cursor twice would be listed forever.
      if (cursor !== undefined && cursors.has(cursor)) break;
      if (cursor !== undefined) cursors.add(cursor);
    } while (cursor !== undefined);
    const skipped = tools.filter((tool) => tool.execution?.taskSupport === 'required');
    if (skipped.length > 0) {
      this.options.logger?.debug({ tools: skipped.map((tool) => tool.name) }, `MCP server ${this.name}: tools that only run as tasks are left out`);
    }
    return tools.filter((tool) => tool.execution?.taskSupport !== 'required');
  }

  /** A connected attempt's connection dropped: end it and try again with backoff. */
  private lost(attempt: Attempt, message: string): void {
    if (attempt.ended || attempt !== this.attempt) return;
    // A connection that held for a while starts the backoff over; one that keeps dropping waits longer each time.
    if (Date.now() - this.connectedAt >= this.backoff.longestMs) this.failures = 0;
    this.fail(attempt, message);
  }

  private fail(attempt: Attempt | undefined, message: string, { retry } = { retry: true }): void {
    if (attempt) this.end(attempt, 'kill');
    if (this.closed) return;
    if (this.currentState !== 'failed' || this.currentMessage !== message) {
      this.options.logger?.warn(`MCP server ${this.name} failed: ${message}${retry ? '; trying again with backoff' : ''}`);
    }
    this.currentTools = [];
    this.set('failed', message);
    if (!retry) return;
    const delay = Math.min(this.backoff.firstMs * 2 ** this.failures, this.backoff.longestMs);
    this.failures += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // The next attempt starts once everything the last one started has ended.
      void Promise.all([...this.endings]).then(() => {
        if (!this.closed) void this.connect();
      });
    }, delay);
  }

  /** Ends an attempt; tracked in `endings` so close() can wait for it. */
  private end(attempt: Attempt, how: 'graceful' | 'kill'): void {
    if (attempt.ended) return;
    attempt.ended = true;
    const ending = this.endAttempt(attempt, how).catch((error: unknown) => {
      this.options.logger?.warn({ err: error }, `ending the MCP server ${this.name} failed`);
    });
    this.endings.add(ending);
    void ending.finally(() => this.endings.delete(ending));
  }

  private async endAttempt(attempt: Attempt, how: 'graceful' | 'kill'): Promise<void> {
    const { client, transport, child } = attempt;
    if (transport instanceof StreamableHTTPClientTransport) {
      if (how === 'graceful' && transport.sessionId !== undefined) {
        await Promise.race([transport.terminateSession().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, sessionEndWaitMs))]);
      }
      await client.close();
      return;
    }
    // A failed server gets no grace; a working one is closed as the MCP spec asks: stdin, then SIGTERM, then SIGKILL.
    // Killed, a jailed server goes with its whole tree: bubblewrap's outer process alone would leave a jail still being set up behind.
    if (how === 'kill' && child?.pid !== undefined && child.exitCode === null && child.signalCode === null) endProcessTree(child.pid);
    await client.close();
    if (child && attempt.exited) {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) endProcessTree(child.pid);
      await Promise.race([attempt.exited, new Promise((resolve) => setTimeout(resolve, exitWaitMs))]);
    }
    // Whatever it started (and left running, perhaps in a session of its own, or a jail whose outer process took SIGTERM
    // while it was being set up) carries the marker.
    await signalCallProcesses(this.options.processMarker, 'SIGKILL');
    attempt.releaseJail?.();
  }

  private set(state: McpConnectionState, message: string | undefined): void {
    this.currentState = state;
    this.currentMessage = message;
    this.emit('changed');
  }
}

/** A failure of the HTTP request itself, or a session the server no longer knows: connect again. */
function isLostHttpConnection(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404;
  return error instanceof TypeError;
}
