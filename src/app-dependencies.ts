import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { HearthEventHub } from './events/hearth-events.ts';
import { Notifications } from './events/notifications.ts';
import { ApprovalGate } from './agent/approval-gate.ts';
import { closeInterruptedRuns } from './agent/recover-runs.ts';
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
import { Accounts } from './household/accounts.ts';
import type { PassphraseCost } from './household/passphrase.ts';
import { Household } from './household/household.ts';
import { Jail } from './jail/jail.ts';
import { MemoryService } from './memory/memory-service.ts';
import { ProfileRegistry } from './profiles/profile-registry.ts';
import { systemClock, type Clock } from './time/clock.ts';
import type { Scheduler } from './scheduler/scheduler.ts';
import { ServiceList } from './service-list.ts';
import type { SessionService } from './sessions/session-service.ts';
import { configuredSpeech } from './speech/configured-speech.ts';
import type { SpeechService } from './speech/speech-service.ts';
import type { Credentials } from './server/identify.ts';
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
