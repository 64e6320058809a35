import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { Agent } from './agent/agent.ts';
import { announceModels } from './events/model-events.ts';
import { announceDocuments } from './events/document-events.ts';
import { sessionContextWindow } from './agent/round-setup.ts';
import type { Channel } from './channels/channel.ts';
import { Channels } from './channels/channels.ts';
import { configuredChannels } from './channels/configured-channels.ts';
import { profileOverridesDir, type Config } from './config.ts';
import type { AppDependencies } from './app-dependencies.ts';
import type { BackendStatusMonitor } from './llm/backend-status.ts';
import { ChannelLinks } from './household/channel-links.ts';
import { systemClock } from './time/clock.ts';
import { HeartbeatTimers } from './scheduler/heartbeat-timers.ts';
import { notifyFinishedRuns } from './scheduler/run-notifications.ts';
import { Scheduler } from './scheduler/scheduler.ts';
import { SessionService } from './sessions/session-service.ts';
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
import { identify } from './server/identify.ts';
import { guardRequests } from './server/request-guard.ts';
import { securityHeaders } from './server/security-headers.ts';
import { scheduleRoutes } from './server/schedule-routes.ts';
import { sessionRoutes } from './server/session-routes.ts';
import { speechRoutes } from './server/speech-routes.ts';
import { statusRoutes } from './server/status-routes.ts';
import { vendorRoutes } from './server/vendor-routes.ts';
import { startWatchers, type Watchers } from './server/watchers.ts';
import { websocketRoutes } from './server/websocket-routes.ts';
import { version } from './version.ts';

/** The web page, found from this file so the server serves it whatever the working folder. */
const publicDir = fileURLToPath(new URL('../public', import.meta.url));

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
