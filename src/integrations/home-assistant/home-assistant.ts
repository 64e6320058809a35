import type { Connection, HassEntity, StateChangedEvent } from 'home-assistant-js-websocket';
import type { Logger } from '../../logger.ts';
import type { IntegrationRegistry, IntegrationState } from '../integration-registry.ts';
import { EntityIndex } from './entity-index.ts';
import { HomeAssistantRest } from './home-assistant-rest.ts';
import type { AreaEntry, DeviceEntry, EntityEntry } from './registry-entries.ts';

export const integrationName = 'home_assistant';

export interface HomeAssistantOptions {
  url: string;
  token: string;
  integrations: IntegrationRegistry;
  logger: Logger;
  /** First wait after a failed connect; it doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  connectTimeoutMs?: number;
}

export interface ConnectionStatus {
  status: IntegrationState;
  message?: string;
}

type StateListener = (entityId: string, state: HassEntity | null) => void;

const registryEvents = ['area_registry_updated', 'device_registry_updated', 'entity_registry_updated'];

/** The client and the socket it opens through, loaded once, when a connection is first made. */
type Client = typeof import('home-assistant-js-websocket') & typeof import('./home-assistant-socket.ts');
let loadingClient: Promise<Client> | undefined;
function loadClient(): Promise<Client> {
  loadingClient ??= Promise.all([import('home-assistant-js-websocket'), import('./home-assistant-socket.ts')]).then(([library, socket]) => ({
    ...library,
    ...socket,
  }));
  return loadingClient;
}

/**
 * Hearth's one connection to Home Assistant, through the official client over a `ws` socket.
 * It loads the registries and states at every (re)connect, follows `state_changed`, retries
 * with backoff when HA is away or refuses the token, and reports each change of status.
 */
export class HomeAssistant {
  readonly index = new EntityIndex();
  readonly rest: HomeAssistantRest;
  private connection: Connection | undefined;
  private current: ConnectionStatus = { status: 'not_configured' };
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private lastFailure = '';
  private readonly stateListeners = new Set<StateListener>();
  private reloadTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: HomeAssistantOptions) {
    this.rest = new HomeAssistantRest(options.url, options.token);
  }

  get configured(): boolean {
    return this.options.url !== '' && this.options.token !== '';
  }

  get url(): string {
    return this.options.url;
  }

  status(): ConnectionStatus {
    return this.current;
  }

  start(): void {
    if (!this.configured) {
      this.report('not_configured', notConfiguredMessage(this.options.url === '' ? 'HA_URL' : 'HA_TOKEN'));
      return;
    }
    this.report('connecting');
    void this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.reloadTimer);
    this.connection?.close();
    this.connection = undefined;
  }

  /** Called with every state change until the returned function is called. */
  onStateChanged(listener: StateListener): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private async connect(): Promise<void> {
    let connection: Connection;
    // Loaded on the first connection only: a Hearth without HA_URL never parses the client.
    let client;
    try {
      client = await loadClient();
    } catch (error) {
      this.report('failed', `the Home Assistant client could not be loaded (${(error as Error).message})`);
      return;
    }
    const { createConnection, ERR_INVALID_AUTH, openHomeAssistantSocket } = client;
    if (this.closed) return;
    try {
      connection = await createConnection({
        setupRetry: 0,
        createSocket: () =>
          openHomeAssistantSocket({
            url: this.options.url,
            token: this.options.token,
            timeoutMs: this.options.connectTimeoutMs ?? 10_000,
            onFailure: (reason) => this.attemptFailed(reason),
          }),
      });
    } catch (error) {
      this.retryLater(error === ERR_INVALID_AUTH);
      return;
    }
    if (this.closed) {
      connection.close();
      return;
    }
    this.connection = connection;
    connection.addEventListener('ready', () => void this.load(connection));
    connection.addEventListener('disconnected', () => this.report('connecting', 'connection lost; reconnecting'));
    // The client gives up for good on a rejected token; Hearth keeps trying, slowly.
    connection.addEventListener('reconnect-error', () => {
      connection.close();
      if (this.connection === connection) this.connection = undefined;
      this.retryLater(true);
    });
    try {
      await connection.subscribeEvents<StateChangedEvent>((event) => this.stateChanged(event), 'state_changed');
      for (const eventType of registryEvents) await connection.subscribeEvents(() => this.reloadSoon(connection), eventType);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'Home Assistant: subscribing to events failed');
    }
    await this.load(connection);
  }

  private async load(connection: Connection): Promise<void> {
    try {
      const [areas, devices, entities, states] = await Promise.all([
        connection.sendMessagePromise<AreaEntry[]>({ type: 'config/area_registry/list' }),
        connection.sendMessagePromise<DeviceEntry[]>({ type: 'config/device_registry/list' }),
        connection.sendMessagePromise<EntityEntry[]>({ type: 'config/entity_registry/list' }),
        connection.sendMessagePromise<HassEntity[]>({ type: 'get_states' }),
      ]);
      if (this.closed || connection !== this.connection) return;
      this.index.load({ areas, devices, entities, states });
      this.attempt = 0;
      this.report('connected', undefined, { entities: this.index.size, areas: this.index.areaCount });
    } catch (error) {
      // A connection lost mid-load is reloaded on `ready`; anything else is worth a line.
      if (connection.connected) this.options.logger.warn({ err: error }, 'Home Assistant: reading the registries and states failed');
    }
  }

  private reloadSoon(connection: Connection): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => void this.load(connection), 500);
  }

  private stateChanged(event: StateChangedEvent): void {
    const { entity_id: entityId, new_state: state } = event.data;
    this.index.update(entityId, state);
    for (const listener of this.stateListeners) listener(entityId, state);
  }

  private attemptFailed(reason: string): void {
    this.lastFailure = reason;
    if (reason === 'token rejected') {
      this.report('failed', 'Home Assistant rejected the token (HA_TOKEN): make a new long-lived access token in your HA profile, Security tab');
    } else {
      this.report('failed', `Home Assistant at ${this.options.url} is unreachable (${reason}); retrying`);
    }
  }

  private retryLater(tokenRejected: boolean): void {
    if (this.closed) return;
    const base = this.options.retryMs ?? 1_000;
    const longest = this.options.maxRetryMs ?? 60_000;
    // A rejected token needs a person to act, so it is tried again no sooner than every 30 s.
    const delay = Math.min(longest, Math.max(base * 2 ** this.attempt++, tokenRejected ? Math.min(longest, 30_000) : 0));
    this.options.logger.warn(`Home Assistant: ${this.lastFailure}; trying again in ${Math.round(delay / 1000)} s`);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private report(status: IntegrationState, message?: string, details: Record<string, unknown> = {}): void {
    this.current = { status, ...(message !== undefined && { message }) };
    this.options.integrations.report({ name: integrationName, status, ...(message !== undefined && { message }), details });
  }
}

/** What is missing and how to put it right, as MQTT's entry says it. */
export function notConfiguredMessage(missing: 'HA_URL' | 'HA_TOKEN'): string {
  return (
    `${missing} is not set: set HA_URL (e.g. http://homeassistant.local:8123) and HA_TOKEN in Hearth's .env and restart Hearth. ` +
    'HA_TOKEN is a long-lived access token: in Home Assistant, your profile (bottom left) → Security → Long-lived access tokens → Create token.'
  );
}
