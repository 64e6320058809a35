import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { Agent } from './agent/agent.ts';
import { HearthEventHub } from './events/hearth-events.ts';
import { Notifications } from './events/notifications.ts';
import { announceModels } from './events/model-events.ts';
import { announceDocuments } from './events/document-events.ts';
import { ApprovalGate } from './agent/approval-gate.ts';
import { closeInterruptedRuns } from './agent/recover-runs.ts';
import { sessionContextWindow } from './agent/round-setup.ts';
import type { Channel } from './channels/channel.ts';
import { Channels } from './channels/channels.ts';
import { configuredChannels } from './channels/configured-channels.ts';
import { removeStaleEmptySessions } from './sessions/empty-sessions.ts';
import { createSubagentRunner } from './agent/subagent.ts';
import { loadPersona } from './agent/persona.ts';
import type { AgentDependencies } from './agent/dependencies.ts';
import { profileOverridesDir, type Config } from './config.ts';
import { Documents } from './documents/document-library.ts';
import type { DocumentLibrary } from './documents/document-types.ts';
import { createEmbedder } from './documents/embedder.ts';
import { createDocumentExtractor } from './documents/extract/extract-document.ts';
import { WatchedFolder } from './documents/watched-folder.ts';
import { HomeAssistant } from './integrations/home-assistant/home-assistant.ts';
import { IntegrationRegistry } from './integrations/integration-registry.ts';
import { MqttConnection } from './integrations/mqtt/mqtt-connection.ts';
import { BackendRegistry } from './llm/backend-registry.ts';
import { BackendStatusMonitor, configuredTarget } from './llm/backend-status.ts';
import { ModelService } from './llm/models/model-service.ts';
import { modelUsers } from './llm/models/model-users.ts';
import { createLogger, type Logger } from './logger.ts';
import { ChannelLinks } from './household/channel-links.ts';
import { Accounts } from './household/accounts.ts';
import type { PassphraseCost } from './household/passphrase.ts';
import { Household } from './household/household.ts';
import { Jail } from './jail/jail.ts';
import { MemoryService } from './memory/memory-service.ts';
import { ProfileRegistry } from './profiles/profile-registry.ts';
import { systemClock, type Clock } from './time/clock.ts';
import { HeartbeatTimers } from './scheduler/heartbeat-timers.ts';
import { notifyFinishedRuns } from './scheduler/run-notifications.ts';
import { Scheduler } from './scheduler/scheduler.ts';
import { ServiceList } from './service-list.ts';
import { SessionService } from './sessions/session-service.ts';
import { configuredSpeech } from './speech/configured-speech.ts';
import type { SpeechService } from './speech/speech-service.ts';
import { serverTimeZone } from './time/schedule-times.ts';
import { agentRoutes } from './server/agent-routes.ts';
import { maxMessageBytes } from './server/client-commands.ts';
import { approvalRoutes } from './server/approval-routes.ts';
import { authRoutes } from './server/auth-routes.ts';
import { meRoutes } from './server/me-routes.ts';
import { peopleRoutes } from './server/people-routes.ts';
import { eventsSocketRoutes } from './server/events-socket-routes.ts';
import { docsRoutes } from './server/docs-routes.ts';
import { documentRoutes } from './server/document-routes.ts';
import { handleError, handleNotFound } from './server/error-handler.ts';
import { fileRoutes } from './server/file-routes.ts';
import { integrationRoutes } from './server/integration-routes.ts';
import { parseJsonBodiesWith } from './server/json-bodies.ts';
import { JsonParser } from './server/json-parser.ts';
import { startFileSweeper } from './sessions/file-sweeper.ts';
import { startGuestSessionSweeper } from './sessions/guest-sessions.ts';
import { memoryRoutes } from './server/memory-routes.ts';
import { modelRoutes } from './server/model-routes.ts';
import { sessionModelSwitch } from './server/model-tools-check.ts';
import { notificationRoutes } from './server/notification-routes.ts';
import { openAiRoutes } from './server/openai-compatible/openai-routes.ts';
import { pageBundleRoutes } from './server/page-bundle-routes.ts';
import { buildSharedValidator } from './server/shared-validators.ts';
import { telegramLinkRoutes } from './server/telegram-link-routes.ts';
import { startingTlsPair, tlsFilesOf, watchTlsPair, type SecureContextTarget, type TlsReloader } from './server/tls-certificate.ts';
import { identify, type Credentials } from './server/identify.ts';
import { guardRequests } from './server/request-guard.ts';
import { securityHeaders } from './server/security-headers.ts';
import { scheduleRoutes } from './server/schedule-routes.ts';
import { sessionRoutes } from './server/session-routes.ts';
import { speechRoutes } from './server/speech-routes.ts';
import { statusRoutes } from './server/status-routes.ts';
import { vendorRoutes } from './server/vendor-routes.ts';
import { startWatchers, type Watchers } from './server/watchers.ts';
import { websocketRoutes } from './server/websocket-routes.ts';
import { backupBeforeMigrating } from './operations/migration-backup.ts';
import { openDatabase } from './store/database.ts';
import { MessageImages } from './store/message-images.ts';
import { createToolRegistry } from './tools/builtin/index.ts';
import { SelfAddress } from './tools/builtin/http/self-address.ts';
import { McpServers } from './tools/mcp/mcp-servers.ts';
import { endLeftoverProcesses } from './tools/process-markers.ts';
import { waitForToolSources } from './tools/tool-sources-ready.ts';
import { ToolSwitches } from './tools/user-tools/tool-switches.ts';
import { UserToolManager } from './tools/user-tools/user-tool-manager.ts';
import { version } from './version.ts';

/** The web page, found from this file so the server serves it whatever the working folder. */
const publicDir = fileURLToPath(new URL('../public', import.meta.url));

export type AppDependencies = AgentDependencies & {
  /** The user tools of TOOLS_DIR, a source of tools loaded in the background after start. */
  userTools: UserToolManager;
  /** The MCP servers of MCP_CONFIG_FILE, each a source of tools (started once the server listens). */
  mcp: McpServers;
  /** Which user and MCP tools are switched on (TOOLS_DIR/enabled.json). */
  toolSwitches: ToolSwitches;
  /** Long-term memory: background extraction, the summary, the facts. */
  memory: MemoryService;
  /** Where the server listens (filled once it does), so the network tools refuse to call it. */
  selfAddress?: SelfAddress;
  /** Whether the default backend answers and has its model; checked in the background once the app is built. */
  backendStatus: BackendStatusMonitor;
  /** The default backend's models: list, pulls, deletes, the default model, warm-ups (docs/protocol.md, "Models"). */
  models: ModelService;
  /** The status of each integration (Home Assistant, MQTT, …), for GET /integrations and /ws/events. */
  integrations: IntegrationRegistry;
  /** What the events socket carries to every open page (docs/protocol.md, "The events socket"). */
  events: HearthEventHub;
  /** Stored, and announced on the events socket (docs/agent.md, "Notifications"). */
  notifications: Notifications;
  /** The Home Assistant connection (started by buildApp, ended at close); not configured without HA_URL. */
  homeAssistant: HomeAssistant;
  /** The MQTT broker connection (started by buildApp, ended at close); not configured without MQTT_URL. */
  mqtt: MqttConnection;
  /** The jail every process started for the agent runs in (probed at start). */
  jail: Jail;
  /** Speech to text and text to speech (STT_BACKEND, TTS_BACKEND), reported as `speech_to_text` and `text_to_speech`. */
  speech: SpeechService;
  /** The household's and each person's documents: added, indexed in the background, searched (docs/documents.md). */
  documents: DocumentLibrary;
  /** What schedules take the time from; tests pass one they move by hand. */
  clock?: Clock;
  /** The scheduler, set by buildApp; the schedule tool reads it when it runs. */
  scheduler?: Scheduler;
  /** The session service, set by buildApp; the tools read it when they run. */
  sessions?: SessionService;
  /** What the app starts and ends, each added where it is created. */
  services: ServiceList;
  /** The people of this Hearth and their roles (docs/people.md). */
  household: Household;
  /** Who a sign-in cookie or a personal API token is (server/identify.ts); without it only AUTH_TOKEN and loopback identify. */
  credentials?: Credentials;
  /** Sign-ins, personal API tokens, people and invitations (docs/people.md). */
  accounts: Accounts;
};

/** Pieces createDependencies uses as they are instead of building them, and waits of the parts it builds. */
export type DependencyOverrides = Partial<Omit<AppDependencies, 'jail'>> & {
  /** The jail, or its creation under way (src/start-server.ts starts probing the machine before anything else waits). */
  jail?: Jail | Promise<Jail>;
  /** How long importing one user-tool module may take (UserToolManager's loadTimeoutMs); 10 s when absent. */
  userToolLoadTimeoutMs?: number;
  /** scrypt's cost for passphrases chosen from now on; passphrase.ts's default when absent. */
  passphraseCost?: PassphraseCost;
};

/** Opens the database and loads what the agent needs; pieces passed in `overrides` are used as they are. */
export async function createDependencies(config: Config, overrides: DependencyOverrides = {}): Promise<AppDependencies> {
  const logger = overrides.logger ?? createLogger(config.LOG_LEVEL, config.LOG_FORMAT);
  // Probing the machine for the jail waits on a few processes: it runs while the database opens.
  const jailCreated = overrides.jail !== undefined ? Promise.resolve(overrides.jail) : Jail.create({ config, logger });
  // Awaited below; caught here only so that a database that fails to open first leaves no unhandled rejection.
  jailCreated.catch(() => undefined);
  const db = overrides.db ?? (await openDatabase(config.DB_PATH, { beforeMigrating: () => backupBeforeMigrating(config) }));
  const services = new ServiceList(logger);
  services.add({ name: 'database', close: () => db.destroy() });
  mkdirSync(config.SESSION_FILES_DIR, { recursive: true });
  const profiles = overrides.profiles ?? (await ProfileRegistry.open(config.PROFILES_DIR, profileOverridesDir(config)));
  // First of all: a tool process a killed or crashed run left behind would go on acting unseen.
  await endLeftoverProcesses(config.DATA_DIR, logger);
  // Sub-agents need the finished dependencies, the registry included, and write_tool/reload_tools
  // need the user-tool manager, which is built after the registry: both are read when they run.
  const runSubagent = createSubagentRunner(() => deps);
  const backends = overrides.backends ?? (await BackendRegistry.fromConfig(config));
  const jail = await jailCreated;
  reportJail(jail, logger);
  services.add({ name: 'jail', close: () => jail.close() });
  // Memory and the memory tools ask who a session's person is when they run, after `deps` is built.
  const person = (personId: string) => deps.household.person(personId);
  const memory = overrides.memory ?? new MemoryService({ db, backends, config, logger, person });
  services.add({ name: 'memory', start: () => memory.start(), close: () => memory.stop() });
  const selfAddress = overrides.selfAddress ?? new SelfAddress({ host: config.HOST, port: config.PORT });
  const integrations = overrides.integrations ?? new IntegrationRegistry();
  const homeAssistant = overrides.homeAssistant ?? new HomeAssistant({ url: config.HA_URL, token: config.HA_TOKEN, integrations, logger });
  services.add({ name: 'Home Assistant', start: () => homeAssistant.start(), close: () => homeAssistant.close() });
  const mqtt =
    overrides.mqtt ??
    new MqttConnection({ url: config.MQTT_URL, username: config.MQTT_USERNAME, password: config.MQTT_PASSWORD, integrations, logger });
  services.add({ name: 'MQTT', start: () => mqtt.start(), close: () => mqtt.close() });
  const speech = overrides.speech ?? (await configuredSpeech({ config, integrations, logger, jail }));
  services.add({ name: 'speech', start: () => speech.start(), close: () => speech.close() });
  const documents = overrides.documents ?? (await openDocuments(config, { db, backends, jail, logger, services }));
  const tools =
    overrides.tools ??
    createToolRegistry({
      db,
      config,
      profiles,
      runSubagent,
      userTools: () => deps.userTools,
      toolSwitches: () => deps.toolSwitches,
      onMemoryChanged: () => memory.runInBackground(),
      person,
      selfAddress,
      mqtt,
      homeAssistant,
      schedules: () => deps.scheduler,
      sessions: () => deps.sessions,
      jail,
      documents: () => documents,
    });
  services.add({ name: 'tools', close: async () => void (await Promise.all(tools.list().map((tool) => tool.dispose?.()))) });
  const mcp =
    overrides.mcp ??
    new McpServers({
      configFile: path.resolve(config.MCP_CONFIG_FILE),
      dataDir: config.DATA_DIR,
      registry: tools,
      integrations,
      logger,
      toolTimeoutMs: config.MCP_TOOL_TIMEOUT_MS,
      watch: true,
      jail,
    });
  // Each server starts in the background, one spawn per turn of the event loop: MCP servers never delay start-up.
  services.add({ name: 'MCP servers', start: () => void mcp.start(), close: () => mcp.close() });
  // Before anything else runs: what a crash cut off is closed truthfully, and nobody can answer its approvals now.
  await closeInterruptedRuns(db, logger);
  await removeStaleEmptySessions(db, config.SESSION_FILES_DIR, logger);
  const household = overrides.household ?? new Household(db);
  if (config.DOCUMENTS_WATCH_DIR !== '') watchDocumentsFolder(config, { documents, household, logger, services });
  const approvals = new ApprovalGate(db, config.APPROVAL_TIMEOUT_S * 1000, logger, { household, profiles });
  await approvals.denyLeftovers();
  const toolSwitches = new ToolSwitches({ toolsDir: config.TOOLS_DIR, registry: tools, logger });
  await toolSwitches.reload();
  const userTools = new UserToolManager({
    toolsDir: config.TOOLS_DIR,
    shippedToolsDir: config.SHIPPED_TOOLS_DIR,
    db,
    source: tools.addSource('user', 'user'),
    timeoutMs: config.USER_TOOL_TIMEOUT_MS,
    logger,
    sessionFilesDir: config.SESSION_FILES_DIR,
    dataDir: config.DATA_DIR,
    maxRssMb: config.USER_TOOL_MAX_RSS_MB,
    envPassthrough: config.TOOL_ENV_PASSTHROUGH,
    jail,
    ...(overrides.userToolLoadTimeoutMs !== undefined && { loadTimeoutMs: overrides.userToolLoadTimeoutMs }),
  });
  services.add({
    name: 'user tools',
    // Nothing waits for the user tools (a file that loops at import would hold everything for the
    // load timeout): they arrive with tools_changed, and close() waits for this load.
    start: () => {
      userTools.whenLoaded().then(
        ({ errors }) => {
          for (const { file, message } of errors) logger.warn({ file }, `user tool not loaded: ${message}`);
        },
        (error: unknown) => logger.error({ err: error }, 'loading the user tools failed; only the built-in tools are available'),
      );
    },
    close: () => userTools.close(),
  });
  // A turn that starts while they still load or connect waits for their tools (registry.ready()).
  waitForToolSources(tools, { userTools, mcp });
  const backendStatus = overrides.backendStatus ?? new BackendStatusMonitor(configuredTarget(config));
  services.add({ name: 'backend status', start: () => backendStatus.start(), close: () => backendStatus.stop() });
  backends.on('call', (outcome) => backendStatus.observeCall(outcome));
  const models =
    overrides.models ??
    new ModelService({ backends, backendStatus, ollamaHost: config.OLLAMA_HOST, dataDir: config.DATA_DIR, profileUsers: (name) => modelUsers(profiles.list(), backends, name) });
  await models.restoreDefault();
  services.add({ name: 'models', stop: () => models.stop() });
  const events = new HearthEventHub();
  const accounts = overrides.accounts ?? new Accounts({ db, household, clock: overrides.clock ?? systemClock, logger, passphraseCost: overrides.passphraseCost });
  const deps: AppDependencies = {
    db,
    config,
    logger,
    profiles,
    tools,
    userTools,
    toolSwitches,
    backends,
    persona: overrides.persona ?? (await loadPersona(config.PERSONA_FILE)),
    memory,
    selfAddress,
    approvals,
    images: overrides.images ?? new MessageImages(path.join(config.DATA_DIR, 'images')),
    memorySummary: overrides.memorySummary ?? ((personId) => memory.summary(personId)),
    backendStatus,
    models,
    integrations,
    events,
    notifications: new Notifications(db, events),
    mqtt,
    homeAssistant,
    mcp,
    jail,
    speech,
    documents,
    services,
    household,
    accounts,
    credentials: overrides.credentials ?? accounts.credentials(),
    ...(overrides.clock && { clock: overrides.clock }),
  };
  return deps;
}

/** The documents libraries, indexing in the background from start until shutdown (resumed at the next start). */
async function openDocuments(
  config: Config,
  parts: { db: AppDependencies['db']; backends: BackendRegistry; jail: Jail; logger: Logger; services: ServiceList },
): Promise<Documents> {
  const documents = await Documents.open({
    db: parts.db,
    documentsDir: config.DOCUMENTS_DIR,
    maxBytes: config.SESSION_FILES_MAX_SIZE_MB * 1024 * 1024,
    extractor: createDocumentExtractor({ jail: parts.jail }),
    embedder: createEmbedder({ backends: parts.backends, config }),
    logger: parts.logger,
  });
  parts.services.add({ name: 'documents', start: () => documents.start(), stop: () => documents.stop() });
  return documents;
}

/**
 * DOCUMENTS_WATCH_DIR's files kept in the household library. Added after the library, so it starts
 * after it; its first reading of the folder runs in the background rather than holding up the start.
 */
function watchDocumentsFolder(
  config: Config,
  parts: { documents: Pick<DocumentLibrary, 'add' | 'delete'>; household: Household; logger: Logger; services: ServiceList },
): void {
  const watched = new WatchedFolder({
    folder: config.DOCUMENTS_WATCH_DIR,
    library: parts.documents,
    owner: () => parts.household.firstOwner(),
    stateFile: path.join(config.DOCUMENTS_DIR, 'watched-folder.json'),
    logger: parts.logger,
    maxBytes: config.SESSION_FILES_MAX_SIZE_MB * 1024 * 1024,
  });
  parts.services.add({
    name: watched.name,
    start: () => void watched.start().catch((error: unknown) => parts.logger.error({ err: error }, 'documents watched folder: not watched')),
    stop: () => watched.stop(),
  });
}

/** Said loudly at start: without a jail, the agent's processes could read everything Hearth can. */
function reportJail(jail: Jail, logger: Logger): void {
  const status = jail.status;
  if (status.state === 'unavailable') {
    logger.error(`jail unavailable: ${status.reason}. Off until it works or JAIL=off is set: ${status.off.join(', ')}. Fix: ${status.fix}`);
  } else if (status.state === 'off') logger.warn(`jail off: ${status.reason}`);
  else {
    if (status.networkProblem !== undefined) logger.warn(`jail: ${status.networkProblem}`);
    if (status.limits.problem !== undefined) logger.warn(`jail: ${status.limits.problem}`);
    if (status.terminalFilter !== 'on') logger.warn(`jail: the terminal-input filter is ${status.terminalFilter}`);
  }
}

export interface BuildOptions {
  /** Watch TOOLS_DIR and PROFILES_DIR and hot-reload them (on unless turned off). */
  watch?: boolean;
  /** Channels people also reach Hearth through (docs/architecture.md, *Adding a channel*), beside those the configuration turns on (TELEGRAM_BOT_TOKEN). */
  channels?: readonly Channel[];
}

/** Builds the whole server without listening; tests use it with port 0. */
export async function buildApp(config: Config, deps: AppDependencies, options: BuildOptions = {}): Promise<FastifyInstance> {
  const tlsFiles = tlsFilesOf(config);
  const tls = tlsFiles && startingTlsPair(tlsFiles);
  // Typed as Fastify's plain-HTTP instance: routes and hooks are the same either way.
  const app = Fastify({
    ...(tls && { https: { cert: tls.cert, key: tls.key } }),
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Every body is small but a message's (its route allows more); uploads are multipart, limited on their own.
    bodyLimit: 1024 * 1024,
    // A model's name is one URL segment of up to 200 characters (DELETE /models/:name), more once encoded.
    routerOptions: { maxParamLength: 600 },
    // Bodies are validated as sent: a number is not quietly turned into a flag, nor an unknown field dropped.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    schemaController: { compilersFactory: { buildValidator: buildSharedValidator } },
  }) as unknown as FastifyInstance;
  const { services } = deps;
  if (tlsFiles && tls) {
    let reloader: TlsReloader | undefined;
    const server = app.server as unknown as SecureContextTarget;
    services.add({
      name: 'TLS certificate reloader',
      start: () => {
        reloader = watchTlsPair({ files: tlsFiles, server, current: tls, logger: deps.logger });
      },
      close: () => reloader?.close(),
    });
  }
  const agent = new Agent(deps, { events: deps.events, notifications: deps.notifications });
  const sessions = new SessionService({
    runs: agent,
    db: deps.db,
    profiles: deps.profiles,
    approvals: deps.approvals,
    household: deps.household,
    filesDirectory: config.SESSION_FILES_DIR,
    images: deps.images,
    events: deps.events,
    onSessionCreated: () => deps.memory.runInBackground(),
  });
  deps.sessions = sessions;
  app.decorate('sessions', sessions);
  const announceTools = () => agent.announceTools();
  deps.userTools.on('changed', announceTools);
  deps.toolSwitches.on('changed', announceTools);
  deps.tools.on('changed', (sourceId) => {
    if (sourceId.startsWith('mcp:')) announceTools();
  });
  app.decorate('agent', agent);
  const clock = deps.clock ?? systemClock;
  // Looked up when a schedule or heartbeat first needs it: asking ICU loads about 6 MB of its data.
  let serverZone: string | undefined;
  const timezone = () => config.SCHEDULER_TIMEZONE || (serverZone ??= serverTimeZone());
  const scheduler = new Scheduler({ db: deps.db, sessions, clock, defaultTimezone: timezone, logger: deps.logger, maxConcurrentRuns: config.SCHEDULER_MAX_CONCURRENT });
  deps.scheduler = scheduler;
  app.decorate('scheduler', scheduler);
  const runNotifications = notifyFinishedRuns({ scheduler, notifications: deps.notifications, sessions, logger: deps.logger });
  services.add({
    name: 'scheduler',
    // Runs each schedule that fell due while the server was down, once.
    start: () => scheduler.start(),
    stop: async () => {
      scheduler.stop();
      await scheduler.settled();
      await runNotifications();
    },
  });
  const heartbeats = new HeartbeatTimers({
    runner: { sessions, profiles: deps.profiles, notifications: deps.notifications },
    events: deps.events,
    clock,
    timezone,
    logger: deps.logger,
  });
  services.add({
    name: 'heartbeats',
    start: () => heartbeats.start(),
    stop: async () => {
      heartbeats.stop();
      await heartbeats.settled();
    },
  });
  app.decorate('heartbeats', heartbeats);
  const channelList = [...(options.channels ?? []), ...(await configuredChannels(config))];
  const channelLinks = new ChannelLinks(deps.db, deps.household, clock);
  const channels = new Channels({ channels: channelList, sessions, links: channelLinks, events: deps.events, approvals: deps.approvals, integrations: deps.integrations, logger: deps.logger, speech: deps.speech, documents: deps.documents });
  services.add({ name: 'channels', start: () => channels.start(), stop: () => channels.stop() });
  // After what starts runs: timers and channels stop taking work before every run is stopped.
  services.add({ name: 'agent', stop: () => agent.stopAll() });
  app.decorate('channels', channels);
  app.decorate('backendStatus', deps.backendStatus);
  deps.backendStatus.on('changed', (status) => deps.events.publish({ type: 'backend_status', backend: status }));
  deps.integrations.on('changed', (status) => deps.events.publish({ type: 'integration_status', ...status }));
  announceModels(deps.models, deps.events);
  announceDocuments(deps.documents, deps.events);
  // The services start once the server listens: nothing they do is needed to answer the first
  // request, and a person waiting on a start waits for the listen (issue 38). A turn that comes
  // before the user and MCP tools waits for them (registry.ready()).
  let listening = false;
  let startServices!: () => void;
  const started = new Promise<void>((resolve) => (startServices = resolve)).then(() => services.startAll());
  app.decorate('started', started);
  // PORT may be 0: the network tools learn the real address once the server is bound.
  app.addHook('onListen', (done) => {
    deps.selfAddress?.listening(app.addresses());
    listening = true;
    startServices();
    done();
  });
  const jsonParser = new JsonParser();
  services.add({ name: 'JSON parser', close: () => jsonParser.close() });
  parseJsonBodiesWith(app, jsonParser);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  await app.register(fastifyHelmet, securityHeaders);
  // Added before the WebSocket plugin's own preClose, which closes every socket: runs stop
  // while their sockets are open, so every watcher hears stream_stopped {reason:"shutdown"}.
  app.addHook('preClose', async () => {
    // A service that is still starting would otherwise start after it was told to stop.
    if (listening) await started.catch(() => undefined);
    await services.stopAll();
  });
  await app.register(fastifyWebsocket, { options: { maxPayload: maxMessageBytes } });
  // After the WebSocket plugin: its onRequest hook marks upgrades, and only a marked upgrade's socket is closed when refused.
  app.addHook('onRequest', guardRequests({ requireLoopbackHost: config.AUTH_TOKEN === '' }));

  // Outside identify(): signing in is how a request comes to have a person.
  await app.register(authRoutes, { accounts: deps.accounts });
  await app.register(async (api) => {
    api.decorateRequest('caller', null as unknown as FastifyRequest['caller']);
    api.addHook('onRequest', identify({ authToken: config.AUTH_TOKEN, household: deps.household, ...(deps.credentials && { credentials: deps.credentials }) }));
    api.get('/health', async () => ({ status: 'ok', version, jail: deps.jail.status }));
    await api.register(agentRoutes, {
      profiles: deps.profiles,
      tools: deps.tools,
      backends: deps.backends,
      userTools: deps.userTools,
      toolSwitches: deps.toolSwitches,
      mcp: deps.mcp,
      persona: deps.persona,
    });
    await api.register(modelRoutes, { models: deps.models, profiles: deps.profiles, tools: deps.tools, backends: deps.backends, persona: deps.persona });
    await api.register(sessionRoutes, {
      sessions,
      contextWindow: (session) => sessionContextWindow(session, deps),
      household: deps.household,
      modelSwitch: sessionModelSwitch(deps.models, deps.profiles, deps.tools),
    });
    await api.register(fileRoutes, { sessions, config });
    await api.register(documentRoutes, { documents: deps.documents, config });
    await api.register(speechRoutes, { sessions, speech: deps.speech, config, logger: deps.logger });
    await api.register(memoryRoutes, { db: deps.db, memory: deps.memory });
    await api.register(approvalRoutes, { sessions, db: deps.db, household: deps.household });
    await api.register(scheduleRoutes, { scheduler, clock, db: deps.db, sessions, household: deps.household });
    await api.register(notificationRoutes, { db: deps.db, notifications: deps.notifications });
    await api.register(telegramLinkRoutes, { links: channelLinks });
    await api.register(websocketRoutes, { sessions, events: deps.events, jsonParser, ends: deps.accounts.ends });
    await api.register(statusRoutes, { backendStatus: deps.backendStatus });
    await api.register(meRoutes, { accounts: deps.accounts });
    await api.register(peopleRoutes, { accounts: deps.accounts, household: deps.household, sessions, scheduler, db: deps.db, documents: deps.documents });
    await api.register(integrationRoutes, { integrations: deps.integrations });
    await api.register(eventsSocketRoutes, { events: deps.events, notifications: deps.notifications, approvals: deps.approvals, backendStatus: deps.backendStatus, sessions, ends: deps.accounts.ends, modelPulls: () => deps.models.currentPulls() });
    await api.register(openAiRoutes, {
      prefix: '/v1',
      sessions,
      backends: deps.backends,
      profileBackend: (profileId) => deps.profiles.get(profileId)?.backend ?? deps.backends.defaultBackend,
      modelSwitch: sessionModelSwitch(deps.models, deps.profiles, deps.tools),
    });
  });
  await app.register(vendorRoutes);
  await app.register(docsRoutes);
  await app.register(pageBundleRoutes, { appFolder: path.join(publicDir, 'app') });
  // One route for the whole folder, not one per file found at start: 60 routes cost every start about 15 ms (issue 38).
  // /app/main.js, the page's bundle, has a route of its own above, which find-my-way prefers to the wildcard.
  await app.register(fastifyStatic, { root: publicDir });

  const fileSweeper = startFileSweeper({ dir: config.SESSION_FILES_DIR, ttlHours: config.SESSION_FILES_TTL_HOURS, db: deps.db, logger: deps.logger });
  services.add({ name: 'file sweeper', close: () => fileSweeper.stop() });
  const guestSweeper = startGuestSessionSweeper({ db: deps.db, sessions, logger: deps.logger });
  services.add({ name: "guests' sessions sweeper", close: () => guestSweeper.stop() });
  if (options.watch !== false) {
    // Before the server listens, unlike the other services: a profile or tool file written the
    // moment it answers must not fall between the profiles read above and a watcher not yet watching.
    // A profile decides which tools a session has, so a profile change is announced as a tool change too.
    const watchers: Watchers = await startWatchers({
      toolsDir: config.TOOLS_DIR,
      shippedToolsDir: config.SHIPPED_TOOLS_DIR,
      profilesDir: config.PROFILES_DIR,
      profileOverridesDir: profileOverridesDir(config),
      userTools: deps.userTools,
      toolSwitches: deps.toolSwitches,
      profiles: deps.profiles,
      onProfilesChanged: () => {
        announceTools();
        agent.announceProfiles();
      },
      logger: deps.logger,
    });
    services.add({ name: 'file watchers', close: () => watchers.close() });
  }
  app.addHook('onClose', () => services.closeAll());
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    agent: Agent;
    sessions: SessionService;
    channels: Channels;
    scheduler: Scheduler;
    heartbeats: HeartbeatTimers;
    backendStatus: BackendStatusMonitor;
    /** Settles once the services have started, in the background after the server began to listen; rejects if one failed to. */
    started: Promise<void>;
  }
}
