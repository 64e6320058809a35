import type { Jail } from '../../jail/jail.ts';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import { afterInputArrivedMeanwhile } from '../../event-loop-turns.ts';
import type { IntegrationRegistry } from '../../integrations/integration-registry.ts';
import type { Logger } from '../../logger.ts';
import type { ToolRefusal, ToolRegistry, ToolSource } from '../tool-registry.ts';
import { readMcpConfig, sameServerConfig, type McpConfig, type McpConfigError, type McpServerConfig, type McpTransportKind } from './mcp-config.ts';
import type { McpBackoff, McpConnection, McpConnectionState } from './mcp-connection.ts';
import { mcpNpmCache } from './mcp-jail.ts';
import type { McpCaller } from './mcp-tool.ts';

export interface McpServersOptions {
  /** MCP_CONFIG_FILE. */
  configFile: string;
  /** DATA_DIR: relative `cwd`s are resolved against it, and it names this Hearth's process markers. */
  dataDir: string;
  registry: ToolRegistry;
  integrations: IntegrationRegistry;
  logger: Logger;
  /** MCP_TOOL_TIMEOUT_MS, handed to the SDK with each call. */
  toolTimeoutMs: number;
  /** Whether an edit of the file reconnects the servers that changed. */
  watch: boolean;
  initializeTimeoutMs?: number;
  backoff?: McpBackoff;
  /** The jail stdio servers run in (what their entries grant); unjailed when absent. */
  jail?: Jail;
  /** Quiet time after the file's last change before it is read again. */
  debounceMs?: number;
  /** Further quiet time before a file being written counts as written. */
  stabilityMs?: number;
}

/** One server as GET /agents/tools lists it. */
export interface McpServerSummary {
  name: string;
  transport: McpTransportKind;
  status: McpConnectionState;
  message?: string;
  /** The Hearth names (`<server>__<tool>`) of its tools in the registry. */
  tools: string[];
  /** A stdio server that runs outside any jail: `"jail": false` in its entry, or no jail on this machine. */
  unjailed?: true;
}

/** A problem for GET /agents/tools `errors`: the file, a server's entry, a failed server or a tool left out. */
export type McpServerError = McpConfigError;

interface ServerEntry {
  config: McpServerConfig;
  connection: McpConnection;
  source: ToolSource;
  /** The definitions last turned into tools, and their JSON (a list_changed may repeat the same list). */
  definitions: readonly McpToolDefinition[];
  signature: string;
  tools: string[];
  refused: ToolRefusal[];
}

const noDefinitions: readonly McpToolDefinition[] = [];

/**
 * The connection and tool modules, which import the MCP SDK (its client, transports and zod
 * schemas: ~300 ms of start-up on a small machine). Loaded when the file first names a server.
 */
type ClientModules = typeof import('./mcp-connection.ts') & typeof import('./mcp-tool.ts');
let loadingClient: Promise<ClientModules> | undefined;
function loadClient(): Promise<ClientModules> {
  loadingClient ??= Promise.all([import('./mcp-connection.ts'), import('./mcp-tool.ts')]).then(([connection, tool]) => ({ ...connection, ...tool }));
  return loadingClient;
}

const startGapMs = 25;

/**
 * The MCP servers of MCP_CONFIG_FILE as tool sources (docs/integrations.md, "MCP servers"). Each server connects on its
 * own, in the background: none delays start-up or another. Each is the registry source
 * `mcp:<server>`, whose tools are replaced as a set whenever the server's list changes, and the
 * integration `mcp:<server>`. Watched, an edit reconnects only the servers whose settings
 * changed, adds new ones and removes deleted ones; a file that cannot be read keeps the running
 * servers.
 */
export class McpServers {
  private readonly entries = new Map<string, ServerEntry>();
  private readonly file: string;
  private configErrors: McpConfigError[] = [];
  private readonly sourceErrors = new Map<string, string>();
  /** Connections being ended after a change of the file. */
  private readonly closing = new Set<Promise<void>>();
  /** Reads of the file, one after another. */
  private work: Promise<void> = Promise.resolve();
  private watcher: FSWatcher | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private started = false;
  private closed = false;
  /** Server starts waiting for their turn of the event loop, one after another. */
  private starts: Promise<void> = Promise.resolve();
  private client: ClientModules | undefined;
  /** Settles once the first read of the file is done (or the servers are closed before one). */
  private readonly firstRead: Promise<void>;
  private firstReadDone: () => void = () => {};
  /** Settles once every server of the first read has connected or failed. */
  private initialConnections: Promise<void> | undefined;

  constructor(private readonly options: McpServersOptions) {
    this.file = path.basename(options.configFile);
    this.firstRead = new Promise((resolve) => (this.firstReadDone = resolve));
  }

  /** Reads the file and starts every server connecting; resolves without waiting for any of them. */
  async start(): Promise<void> {
    if (this.started || this.closed) return;
    this.started = true;
    await this.reload();
    this.firstReadDone();
    if (!this.options.watch || this.closed) return;
    this.watcher = this.watchFile();
    // An edit made during the first read was not seen: read once more (unchanged servers stay as they are).
    await this.reload();
  }

  /** Reads the file again and applies what changed; what the watcher runs after an edit. */
  reload(): Promise<void> {
    const next = this.work.then(async () => {
      if (this.closed) return;
      const config = await readMcpConfig(this.options.configFile, this.options.dataDir);
      if (config.servers.length > 0 && !this.client) {
        // Checking the file's entries, loading the SDK and starting the servers each hold the
        // thread for some tens of milliseconds, just after the server starts listening: the
        // requests that came meanwhile are served between them.
        await afterInputArrivedMeanwhile();
        this.client = await loadClient();
        await afterInputArrivedMeanwhile();
      }
      if (!this.closed) this.apply(config);
    });
    this.work = next.catch((error: unknown) => this.options.logger.error({ err: error }, 'reading the MCP servers\' file failed'));
    return this.work;
  }

  /** Problems of the file and of each server, for GET /agents/tools `errors`. */
  errors(): McpServerError[] {
    const errors: McpServerError[] = [...this.configErrors];
    for (const [server, message] of this.sourceErrors) errors.push({ file: this.file, server, message });
    for (const [server, entry] of this.entries) {
      const { state, message } = entry.connection;
      if (state === 'failed' && message !== undefined) errors.push({ file: this.file, server, message });
      for (const refusal of entry.refused) errors.push({ file: this.file, server, message: refusal.message });
    }
    return errors;
  }

  private isUnjailed(config: McpServerConfig): boolean {
    // Without a working jail a server that asks for one is refused, not run unjailed (its status says why).
    return config.transport === 'stdio' && (config.jail === false || this.options.jail === undefined || this.options.jail.status.state === 'off');
  }

  /** Every configured server with its status and tools, for GET /agents/tools `servers`. */
  servers(): McpServerSummary[] {
    return [...this.entries.values()].map(({ config, connection, tools }) => ({
      name: config.name,
      transport: config.transport,
      status: connection.state,
      ...(connection.message !== undefined && { message: connection.message }),
      tools: [...tools],
      ...(this.isUnjailed(config) && { unjailed: true as const }),
    }));
  }

  /** The process id of a stdio server while it runs. */
  pid(server: string): number | undefined {
    return this.entries.get(server)?.connection.pid;
  }

  /**
   * Resolves once the servers the file named at start have each connected or failed, or after
   * `limitMs`, whichever is first: a turn that starts right after a restart waits here for their
   * tools. A server that fails does not hold the others; later reconnects are not waited for.
   */
  async ready(limitMs: number): Promise<void> {
    this.initialConnections ??= this.firstRead.then(() =>
      Promise.all([...this.entries.values()].map(({ connection }) => settledConnection(connection))).then(() => undefined),
    );
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)));
    try {
      await Promise.race([this.initialConnections, limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops watching and ends every server (their processes with them), also those still connecting. */
  async close(): Promise<void> {
    this.closed = true;
    this.firstReadDone();
    clearTimeout(this.reloadTimer);
    this.watcher?.close();
    await this.work;
    await Promise.all([...[...this.entries.values()].map((entry) => entry.connection.close()), ...this.closing]);
  }

  private apply(config: McpConfig): void {
    for (const error of config.errors) this.options.logger.warn({ file: error.file, server: error.server }, `MCP server not loaded: ${error.message}`);
    this.configErrors = config.errors;
    // A file that cannot be read (say, half-way through an edit) changes nothing that runs.
    if (!config.readable) return;
    const wanted = new Set(config.servers.map((server) => server.name));
    // A server whose entry is now wrong keeps running with its last good settings; the error says why the edit did not apply.
    const kept = new Set(config.invalid);
    for (const name of [...this.entries.keys()]) if (!wanted.has(name) && !kept.has(name)) this.removeServer(name);
    for (const name of [...this.sourceErrors.keys()]) if (!wanted.has(name)) this.sourceErrors.delete(name);
    for (const server of config.servers) {
      const entry = this.entries.get(server.name);
      if (!entry) this.addServer(server);
      else if (!sameServerConfig(entry.config, server)) this.replaceServer(entry, server);
    }
  }

  private addServer(config: McpServerConfig): void {
    let source: ToolSource;
    try {
      source = this.options.registry.addSource(`mcp:${config.name}`, 'mcp');
    } catch (error) {
      this.sourceErrors.set(config.name, (error as Error).message);
      return;
    }
    this.sourceErrors.delete(config.name);
    const entry: ServerEntry = { config, connection: this.connect(config), source, definitions: noDefinitions, signature: '[]', tools: [], refused: [] };
    this.entries.set(config.name, entry);
    this.follow(entry, entry.connection);
    this.update(entry);
    this.startSoon(entry.connection);
  }

  /**
   * Starting a stdio server spawns its process, which holds the event loop for 10 ms or so (the
   * fork of a large process): starts spaced `startGapMs` apart let a request that arrives meanwhile
   * (the first /health, a page loading, which needs a few turns of the loop) wait behind one
   * spawn at most, instead of behind ten.
   */
  private startSoon(connection: McpConnection): void {
    this.starts = this.starts
      .then(() => new Promise<void>((resolve) => setTimeout(resolve, startGapMs)))
      .then(() => {
        if (!this.closed) connection.start();
      });
  }

  /** New settings: the old connection ends, then the new one starts (a server may not run twice at once). */
  private replaceServer(entry: ServerEntry, config: McpServerConfig): void {
    this.options.logger.info(`MCP server ${config.name}'s settings changed; reconnecting it`);
    const previous = entry.connection;
    const next = this.connect(config);
    entry.config = config;
    entry.connection = next;
    this.follow(entry, next);
    this.update(entry);
    const ending = previous.close().then(() => {
      if (!this.closed && entry.connection === next) next.start();
    });
    this.track(ending);
  }

  private removeServer(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.options.logger.info(`MCP server ${name} was removed from ${this.file}`);
    this.entries.delete(name);
    this.track(entry.connection.close());
    entry.source.remove();
    this.options.integrations.remove(`mcp:${name}`);
  }

  private connect(config: McpServerConfig): McpConnection {
    const { McpConnection, mcpProcessMarker } = this.loadedClient();
    return new McpConnection({
      config,
      processMarker: mcpProcessMarker(this.options.dataDir, config.name),
      logger: this.options.logger.child({ mcp_server: config.name }),
      ...(this.options.initializeTimeoutMs !== undefined && { initializeTimeoutMs: this.options.initializeTimeoutMs }),
      ...(this.options.backoff !== undefined && { backoff: this.options.backoff }),
      ...(this.options.jail !== undefined && { jail: this.options.jail }),
      npmCache: mcpNpmCache(this.options.dataDir),
    });
  }

  private follow(entry: ServerEntry, connection: McpConnection): void {
    connection.on('changed', () => {
      // A connection replaced after an edit may still report while it ends.
      if (entry.connection === connection && this.entries.get(entry.config.name) === entry) this.update(entry);
    });
  }

  /** Brings the registry's tools and the integration's status in line with the connection. */
  private update(entry: ServerEntry): void {
    const { connection, config } = entry;
    const definitions = connection.state === 'connected' ? connection.tools : noDefinitions;
    if (definitions !== entry.definitions) {
      const signature = JSON.stringify(definitions);
      entry.definitions = definitions;
      if (signature !== entry.signature) {
        entry.signature = signature;
        this.fillTools(entry, definitions);
      }
    }
    this.options.integrations.report({
      name: `mcp:${config.name}`,
      status: connection.state,
      ...(connection.message !== undefined && { message: connection.message }),
      details: { transport: config.transport, tools: entry.tools.length, ...(this.isUnjailed(config) && { unjailed: true }) },
    });
  }

  private fillTools(entry: ServerEntry, definitions: readonly McpToolDefinition[]): void {
    const server = entry.config.name;
    // Bound to the entry, not the connection: after a reconnect the same tools reach the new one.
    const call: McpCaller = (toolName, args, { signal }) => entry.connection.callTool(toolName, args, { signal, timeoutMs: this.options.toolTimeoutMs });
    const { tools, refused } = this.loadedClient().mcpTools(server, definitions, call, { timeoutMs: this.options.toolTimeoutMs, trusted: entry.config.trusted });
    const taken = entry.source.replace(tools);
    const takenNames = new Set(taken.map((refusal) => refusal.name));
    entry.tools = tools.map((tool) => tool.name).filter((name) => !takenNames.has(name));
    entry.refused = [...refused, ...taken.map(({ name, message }) => ({ name, message: `Tool ${name} of the MCP server ${server} was left out: ${message}` }))];
    for (const refusal of entry.refused) this.options.logger.warn({ mcp_server: server, tool: refusal.name }, refusal.message);
  }

  /** The client modules, loaded by reload() before a server is added. */
  private loadedClient(): ClientModules {
    if (!this.client) throw new Error('the MCP client modules are used before they were loaded');
    return this.client;
  }

  private track(ending: Promise<void>): void {
    const tracked = ending.catch((error: unknown) => this.options.logger.warn({ err: error }, 'ending an MCP server failed'));
    this.closing.add(tracked);
    void tracked.finally(() => this.closing.delete(tracked));
  }

  /**
   * Watches the file's folder (the file may not exist yet, and editors replace it) through the
   * kernel's notifications, filtered by name. A watcher that re-reads the folder on each event
   * (chokidar's) did so on every write of a busy neighbour, such as the SQLite files when
   * mcp.json sits in DATA_DIR: 6 % of the server's CPU while 100 answers streamed.
   */
  private watchFile(): FSWatcher | undefined {
    const file = path.resolve(this.options.configFile);
    try {
      const watcher = watch(path.dirname(file), (_event, changed) => {
        if (changed === null || changed === path.basename(file)) this.scheduleReload();
      });
      watcher.on('error', (error) => this.options.logger.error({ err: error, file }, 'watching the MCP servers\' file failed'));
      return watcher;
    } catch (error) {
      this.options.logger.warn({ err: error, file }, 'the MCP servers\' file is not watched: its folder cannot be watched');
      return undefined;
    }
  }

  private scheduleReload(): void {
    if (this.closed) return;
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      void this.reload();
    }, (this.options.debounceMs ?? 50) + (this.options.stabilityMs ?? 50));
  }
}

/** Resolves once the connection is no longer `connecting`. */
function settledConnection(connection: McpConnection): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (connection.state === 'connecting') return;
      connection.off('changed', check);
      resolve();
    };
    connection.on('changed', check);
    check();
  });
}
