/**
 * A Home Assistant stand-in on a free loopback port. It speaks HA's documented WebSocket API
 * (https://developers.home-assistant.io/docs/api/websocket) and REST API
 * (https://developers.home-assistant.io/docs/api/rest) over the small house of
 * `home-assistant-house.ts`, well enough for the official `home-assistant-js-websocket`
 * client to connect to it unchanged. Tests steer it through the returned controls.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { buildHouse, type Area, type Attributes, type Device, type Entity } from './home-assistant-house.ts';
import { homeAssistantService, ServiceError, serviceDescriptions, services } from './home-assistant-services.ts';

export const standInHaVersion = '2025.10.1';

export interface HomeAssistantStandInOptions {
  /** The long-lived access token it accepts; a random one by default. */
  token?: string;
  /** Generated entities (lights, plugs, sensors) added to the house, e.g. 2,000 for benchmarks. */
  extraEntities?: number;
  /** Starts a `state_changed` storm at once (see `startStorm`). */
  storm?: StormOptions;
  /**
   * A service call naming an entity that does not exist: `ignore` (the default) does what real
   * HA does, which only logs a warning and answers success with nothing changed; `error`
   * refuses it with `service_validation_error`, as HA does for an invalid service value.
   */
  missingEntities?: 'error' | 'ignore';
}

export interface StateObject {
  entity_id: string;
  state: string;
  attributes: Attributes;
  last_changed: string;
  last_reported: string;
  last_updated: string;
  context: { id: string; parent_id: null; user_id: string | null };
}

export interface ServiceCall {
  domain: string;
  service: string;
  /** service_data without the targeting keys. */
  data: Attributes;
  /** The entities it resolved to, existing or not. */
  entity_ids: string[];
  via: 'websocket' | 'rest';
  /** Why the stand-in refused it; absent when it ran. */
  error?: { code: string; message: string };
}

export interface StormOptions {
  eventsPerSecond: number;
  /** Which entities change; by default every numeric sensor. */
  entityIds?: string[];
  /** Stops by itself after this long; runs until `stop()` otherwise. */
  durationMs?: number;
}

export interface Storm {
  /** How many state_changed events it has fired so far. */
  readonly sent: number;
  stop(): void;
  /** Resolves with the count when the storm ends (its duration elapsed or `stop()`). */
  readonly finished: Promise<number>;
}

interface StandInEvents {
  authenticated: [];
  auth_rejected: [];
  socket_closed: [];
  service_call: [ServiceCall];
  state_changed: [StateObject | null, StateObject];
}

export interface HomeAssistantStandIn {
  /** Base URL, `http://127.0.0.1:<port>`; the WebSocket API is at `<url>/api/websocket`. */
  readonly url: string;
  readonly token: string;
  readonly port: number;
  /** Every service call received, in order, refused ones included (with `error`). */
  readonly serviceCalls: ServiceCall[];
  /** `authenticated`, `auth_rejected`, `socket_closed`, `service_call`, `state_changed`: for tests to wait on. */
  readonly events: EventEmitter<StandInEvents>;
  readonly areas: Area[];
  readonly devices: Device[];
  readonly entities: Entity[];
  /** WebSockets that passed authentication and are still open. */
  authenticatedSockets(): number;
  states(): StateObject[];
  state(entityId: string): StateObject | undefined;
  /** Sets a state as an integration would and fires `state_changed`; `attributes` are merged into the current ones. */
  setState(entityId: string, state: string, attributes?: Attributes): StateObject;
  /** Every state the entity has had, oldest first. */
  history(entityId: string): StateObject[];
  /** Closes every WebSocket abruptly, without a close frame, as a network drop would. */
  dropConnections(): void;
  /** HA going away: closes every connection and stops listening; states are kept. */
  stop(): Promise<void>;
  /** HA coming back on the same port. */
  restart(): Promise<void>;
  /** While true, every token is refused (WebSocket `auth_invalid`, REST 401). */
  rejectToken(reject: boolean): void;
  startStorm(options: StormOptions): Storm;
  close(): Promise<void>;
}

interface Client {
  socket: WebSocket;
  authenticated: boolean;
  lastId: number;
  subscriptions: Map<number, { kind: 'events'; eventType: string | undefined } | { kind: 'entities'; entityIds: Set<string> | undefined }>;
}

type Message = Record<string, unknown> & { id?: unknown; type?: unknown };

function isoTime(milliseconds: number): string {
  return new Date(milliseconds).toISOString().replace('Z', '+00:00');
}

function contextId(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  return Array.from(randomBytes(26), (byte) => alphabet[byte % 32]).join('');
}

function seconds(iso: string): number {
  return Date.parse(iso) / 1000;
}

function compressed(state: StateObject): Record<string, unknown> {
  const entry: Record<string, unknown> = { s: state.state, a: state.attributes, c: state.context.id, lc: seconds(state.last_changed) };
  if (state.last_updated !== state.last_changed) entry.lu = seconds(state.last_updated);
  return entry;
}

function compressedDiff(previous: StateObject, next: StateObject): Record<string, unknown> {
  const added: Record<string, unknown> = {};
  if (previous.state !== next.state) added.s = next.state;
  if (previous.last_changed !== next.last_changed) added.lc = seconds(next.last_changed);
  else added.lu = seconds(next.last_updated);
  if (previous.context.id !== next.context.id) added.c = next.context.id;
  const changedAttributes: Attributes = {};
  for (const [key, value] of Object.entries(next.attributes)) {
    if (JSON.stringify(previous.attributes[key]) !== JSON.stringify(value)) changedAttributes[key] = value;
  }
  if (Object.keys(changedAttributes).length > 0) added.a = changedAttributes;
  const removed = Object.keys(previous.attributes).filter((key) => !(key in next.attributes));
  return removed.length > 0 ? { '+': added, '-': { a: removed } } : { '+': added };
}

function list(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : String(value).split(',')).map((item) => String(item).trim()).filter(Boolean);
}

const targetKeys = ['entity_id', 'device_id', 'area_id', 'floor_id', 'label_id'];

export async function startHomeAssistantStandIn(options: HomeAssistantStandInOptions = {}): Promise<HomeAssistantStandIn> {
  const startedAt = Date.now();
  const token = options.token ?? `stand-in-${randomBytes(24).toString('hex')}`;
  const house = buildHouse(startedAt, options.extraEntities ?? 0);
  const events = new EventEmitter<StandInEvents>();
  const serviceCalls: ServiceCall[] = [];
  const current = new Map<string, StateObject>();
  const past = new Map<string, StateObject[]>();
  const registryTime = (startedAt - 90 * 24 * 3_600_000) / 1000;
  const devicesById = new Map(house.devices.map((device) => [device.id, device]));
  const entitiesById = new Map(house.entities.map((entity) => [entity.entity_id, entity]));
  const clients = new Set<Client>();
  const storms = new Set<Storm>();
  let tokenRejected = false;
  let server: Server | undefined;
  let port = 0;

  for (const entity of house.entities) {
    const states: StateObject[] = [];
    for (const record of house.history.get(entity.entity_id)!) {
      const previous = states.at(-1);
      states.push({
        entity_id: entity.entity_id,
        state: record.state,
        attributes: record.attributes,
        last_changed: previous?.state === record.state ? previous.last_changed : isoTime(record.changed),
        last_reported: isoTime(record.changed),
        last_updated: isoTime(record.changed),
        context: { id: contextId(), parent_id: null, user_id: null },
      });
    }
    past.set(entity.entity_id, states);
    current.set(entity.entity_id, states.at(-1)!);
  }

  function areaOf(entityId: string): string | null {
    const entity = entitiesById.get(entityId);
    if (!entity) return null;
    return entity.area_id ?? (entity.device_id ? (devicesById.get(entity.device_id)?.area_id ?? null) : null);
  }

  function send(client: Client, message: unknown): void {
    if (client.socket.readyState === client.socket.OPEN) client.socket.send(JSON.stringify(message));
  }

  function broadcast(previous: StateObject | null, next: StateObject): void {
    for (const client of clients) {
      if (!client.authenticated) continue;
      for (const [id, subscription] of client.subscriptions) {
        if (subscription.kind === 'events') {
          if (subscription.eventType !== undefined && subscription.eventType !== 'state_changed') continue;
          send(client, {
            id,
            type: 'event',
            event: { event_type: 'state_changed', data: { entity_id: next.entity_id, old_state: previous, new_state: next }, origin: 'LOCAL', time_fired: next.last_updated, context: next.context },
          });
        } else if (!subscription.entityIds || subscription.entityIds.has(next.entity_id)) {
          const update = previous ? { c: { [next.entity_id]: compressedDiff(previous, next) } } : { a: { [next.entity_id]: compressed(next) } };
          send(client, { id, type: 'event', event: update });
        }
      }
    }
  }

  function writeState(entityId: string, state: string, attributes: Attributes, context = { id: contextId(), parent_id: null, user_id: null as string | null }): StateObject {
    const previous = current.get(entityId) ?? null;
    const now = isoTime(Date.now());
    if (previous && previous.state === state && JSON.stringify(previous.attributes) === JSON.stringify(attributes)) {
      previous.last_reported = now;
      return previous;
    }
    const next: StateObject = {
      entity_id: entityId,
      state,
      attributes,
      last_changed: previous && previous.state === state ? previous.last_changed : now,
      last_reported: now,
      last_updated: now,
      context,
    };
    current.set(entityId, next);
    const entityPast = past.get(entityId) ?? [];
    entityPast.push(next);
    past.set(entityId, entityPast);
    broadcast(previous, next);
    events.emit('state_changed', previous, next);
    return next;
  }

  function resolveEntities(domain: string, data: Attributes, target: Attributes): string[] {
    const named = [...list(target.entity_id), ...list(data.entity_id)];
    const areas = [...list(target.area_id), ...list(data.area_id)];
    const devices = [...list(target.device_id), ...list(data.device_id)];
    const inDomain = (entityId: string) => domain === 'homeassistant' || entityId.startsWith(`${domain}.`);
    const chosen = new Set<string>();
    for (const entityId of named) {
      if (entityId === 'all') [...current.keys()].filter(inDomain).forEach((id) => chosen.add(id));
      else chosen.add(entityId);
    }
    for (const entity of house.entities) {
      if (!inDomain(entity.entity_id)) continue;
      if (areas.includes(areaOf(entity.entity_id) ?? '') || (entity.device_id && devices.includes(entity.device_id))) chosen.add(entity.entity_id);
    }
    return [...chosen];
  }

  /** Runs a service call as HA would and answers the states it changed. */
  function callService(domain: string, service: string, serviceData: Attributes, target: Attributes, via: ServiceCall['via']): { changed: StateObject[]; context: StateObject['context'] } {
    const data = Object.fromEntries(Object.entries(serviceData).filter(([key]) => !targetKeys.includes(key)));
    const entityIds = resolveEntities(domain, serviceData, target);
    const call: ServiceCall = { domain, service, data, entity_ids: entityIds, via };
    serviceCalls.push(call);
    try {
      const known = domain === 'homeassistant' ? ['turn_on', 'turn_off', 'toggle'].includes(service) : services[domain]?.[service] !== undefined;
      if (!known) throw new ServiceError('not_found', `Action ${domain}.${service} not found.`);
      const missing = entityIds.filter((entityId) => !current.has(entityId) || (domain !== 'homeassistant' && !entityId.startsWith(`${domain}.`)));
      if (missing.length > 0 && options.missingEntities === 'error') {
        throw new ServiceError('service_validation_error', `Referenced entities ${missing.join(', ')} are missing or not currently available`);
      }
      const planned: { entityId: string; state: string; attributes: Attributes }[] = [];
      for (const entityId of entityIds.filter((id) => !missing.includes(id))) {
        const entityDomain = entityId.split('.')[0]!;
        const handler = domain === 'homeassistant' ? homeAssistantService(service, entityDomain) : services[domain]![service]!;
        if (!handler) continue;
        const before = current.get(entityId)!;
        planned.push({ entityId, ...handler.effect({ state: before.state, attributes: before.attributes }, data) });
      }
      const context = { id: contextId(), parent_id: null, user_id: 'b1f2c3d4e5f60718293a4b5c6d7e8f90' };
      const changed: StateObject[] = [];
      for (const plan of planned) {
        const before = current.get(plan.entityId);
        const after = writeState(plan.entityId, plan.state, plan.attributes, context);
        if (after !== before) changed.push(after);
      }
      events.emit('service_call', call);
      return { changed, context };
    } catch (error) {
      if (error instanceof ServiceError) call.error = { code: error.code, message: error.message };
      events.emit('service_call', call);
      throw error;
    }
  }

  const config = () => ({
    latitude: 52.3731,
    longitude: 4.8922,
    elevation: 2,
    radius: 100,
    unit_system: { length: 'km', accumulated_precipitation: 'mm', area: 'm²', mass: 'g', pressure: 'Pa', temperature: '°C', volume: 'L', wind_speed: 'm/s' },
    location_name: 'Home',
    time_zone: 'Europe/Amsterdam',
    components: ['api', 'websocket_api', 'history', 'recorder', ...new Set(house.entities.map((entity) => entity.entity_id.split('.')[0]!))],
    config_dir: '/config',
    allowlist_external_dirs: ['/media', '/config/www'],
    allowlist_external_urls: [],
    version: standInHaVersion,
    config_source: 'storage',
    recovery_mode: false,
    state: 'RUNNING',
    external_url: null,
    internal_url: null,
    currency: 'EUR',
    country: 'NL',
    language: 'en',
    safe_mode: false,
    debug: false,
  });

  const areaRegistry = () =>
    house.areas.map((area) => ({ aliases: [], area_id: area.area_id, floor_id: null, humidity_entity_id: null, icon: null, labels: [], name: area.name, picture: null, temperature_entity_id: null, created_at: registryTime, modified_at: registryTime }));

  const deviceRegistry = () =>
    house.devices.map((device) => ({
      area_id: device.area_id,
      configuration_url: null,
      config_entries: [`entry_${device.id.slice(0, 12)}`],
      config_entries_subentries: { [`entry_${device.id.slice(0, 12)}`]: [null] },
      connections: [],
      created_at: registryTime,
      disabled_by: null,
      entry_type: null,
      hw_version: null,
      id: device.id,
      identifiers: [[device.manufacturer.split(' ')[0]!.toLowerCase(), device.id.slice(0, 16)]],
      labels: [],
      manufacturer: device.manufacturer,
      model: device.model,
      model_id: null,
      modified_at: registryTime,
      name_by_user: null,
      name: device.name,
      primary_config_entry: `entry_${device.id.slice(0, 12)}`,
      serial_number: null,
      sw_version: '1.0.0',
      via_device_id: null,
    }));

  const entityRegistry = () =>
    house.entities.map((entity) => ({
      area_id: entity.area_id,
      categories: {},
      config_entry_id: entity.device_id ? `entry_${entity.device_id.slice(0, 12)}` : null,
      created_at: registryTime,
      device_id: entity.device_id,
      disabled_by: null,
      entity_category: null,
      entity_id: entity.entity_id,
      has_entity_name: false,
      hidden_by: null,
      icon: null,
      id: entity.entity_id.replace('.', '_'),
      labels: [],
      modified_at: registryTime,
      name: null,
      options: { conversation: { should_expose: true } },
      original_name: entity.attributes.friendly_name ?? null,
      platform: entity.platform,
      translation_key: null,
      unique_id: `${entity.platform}_${entity.entity_id.split('.')[1]}`,
    }));

  function handleCommand(client: Client, message: Message): void {
    const id = message.id;
    const result = (value: unknown) => send(client, { id, type: 'result', success: true, result: value });
    const failure = (code: string, text: string) => send(client, { id, type: 'result', success: false, error: { code, message: text } });
    if (typeof id !== 'number' || !Number.isInteger(id)) return failure('invalid_format', "Message incorrectly formatted: expected int for dictionary value @ data['id']");
    if (id <= client.lastId) return failure('id_reuse', 'Identifier values have to increase.');
    client.lastId = id;
    switch (message.type) {
      case 'ping':
        return send(client, { id, type: 'pong' });
      case 'supported_features':
        return result(null);
      case 'auth/current_user':
        return result({ id: 'b1f2c3d4e5f60718293a4b5c6d7e8f90', name: 'Hearth', is_owner: true, is_admin: true, credentials: [], mfa_modules: [] });
      case 'get_states':
        return result([...current.values()]);
      case 'get_config':
        return result(config());
      case 'get_services':
        return result(serviceDescriptions());
      case 'config/area_registry/list':
        return result(areaRegistry());
      case 'config/device_registry/list':
        return result(deviceRegistry());
      case 'config/entity_registry/list':
        return result(entityRegistry());
      case 'subscribe_events':
        client.subscriptions.set(id, { kind: 'events', eventType: typeof message.event_type === 'string' ? message.event_type : undefined });
        return result(null);
      case 'subscribe_entities': {
        const entityIds = Array.isArray(message.entity_ids) ? new Set(message.entity_ids.map(String)) : undefined;
        client.subscriptions.set(id, { kind: 'entities', entityIds });
        result(null);
        const added = Object.fromEntries([...current.values()].filter((state) => !entityIds || entityIds.has(state.entity_id)).map((state) => [state.entity_id, compressed(state)]));
        return send(client, { id, type: 'event', event: { a: added } });
      }
      case 'unsubscribe_events': {
        const subscription = Number(message.subscription);
        if (!client.subscriptions.delete(subscription)) return failure('not_found', 'Subscription not found.');
        return result(null);
      }
      case 'call_service': {
        try {
          const outcome = callService(String(message.domain), String(message.service), (message.service_data as Attributes) ?? {}, (message.target as Attributes) ?? {}, 'websocket');
          return result({ context: outcome.context, response: null });
        } catch (error) {
          if (error instanceof ServiceError) return failure(error.code, error.message);
          throw error;
        }
      }
      default:
        return failure('unknown_command', 'Unknown command.');
    }
  }

  function accept(socket: WebSocket): void {
    const client: Client = { socket, authenticated: false, lastId: 0, subscriptions: new Map() };
    clients.add(client);
    socket.on('close', () => {
      clients.delete(client);
      events.emit('socket_closed');
    });
    socket.on('error', () => socket.terminate());
    socket.on('message', (raw) => {
      let message: Message;
      try {
        message = JSON.parse(raw.toString()) as Message;
      } catch {
        if (!client.authenticated) return void socket.close();
        return send(client, { id: null, type: 'result', success: false, error: { code: 'invalid_format', message: 'Message incorrectly formatted.' } });
      }
      if (client.authenticated) return handleCommand(client, message);
      if (message.type !== 'auth' || typeof message.access_token !== 'string') {
        send(client, { type: 'auth_invalid', message: 'Auth message incorrectly formatted: expected str for dictionary value @ data[\'access_token\']' });
        return void socket.close();
      }
      if (tokenRejected || message.access_token !== token) {
        send(client, { type: 'auth_invalid', message: 'Invalid access token or password' });
        events.emit('auth_rejected');
        return void socket.close();
      }
      client.authenticated = true;
      send(client, { type: 'auth_ok', ha_version: standInHaVersion });
      events.emit('authenticated');
    });
    send(client, { type: 'auth_required', ha_version: standInHaVersion });
  }

  function reply(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    response.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json', ...headers });
    response.end(text);
  }

  function historyPeriod(response: ServerResponse, start: string | undefined, query: URLSearchParams): void {
    const parse = (value: string) => Date.parse(value.replace(' ', '+'));
    const startTime = start ? parse(decodeURIComponent(start)) : Date.now() - 24 * 3_600_000;
    const endTime = query.has('end_time') ? parse(query.get('end_time')!) : Date.now();
    if (Number.isNaN(startTime) || Number.isNaN(endTime)) return reply(response, 400, { message: 'Invalid datetime' });
    const entityIds = list(query.get('filter_entity_id'));
    if (entityIds.length === 0) return reply(response, 400, { message: 'filter_entity_id is missing' });
    if (entityIds.some((entityId) => !/^[a-z0-9_]+\.[a-z0-9_]+$/.test(entityId))) return reply(response, 400, { message: 'Invalid filter_entity_id' });
    const minimal = query.has('minimal_response');
    const noAttributes = query.has('no_attributes');
    const answer: Record<string, unknown>[][] = [];
    for (const entityId of entityIds) {
      const states = past.get(entityId) ?? [];
      const atStart = states.filter((state) => Date.parse(state.last_updated) <= startTime).at(-1);
      const within = states.filter((state) => Date.parse(state.last_updated) > startTime && Date.parse(state.last_updated) <= endTime);
      const period: StateObject[] = [];
      if (atStart && startTime <= endTime) period.push({ ...atStart, last_changed: isoTime(startTime), last_updated: isoTime(startTime), last_reported: isoTime(startTime) });
      period.push(...within);
      if (period.length === 0) continue;
      answer.push(
        period.map((state, index) => {
          if (minimal && index > 0 && index < period.length - 1) return { state: state.state, last_changed: state.last_changed };
          const { context: _context, ...rest } = state;
          return noAttributes ? { ...rest, attributes: {} } : rest;
        }),
      );
    }
    reply(response, 200, answer);
  }

  function handleRest(request: IncomingMessage, response: ServerResponse, body: string): void {
    const address = new URL(request.url ?? '/', 'http://stand-in');
    const path = address.pathname;
    if (!path.startsWith('/api/')) return reply(response, 404, '404: Not Found');
    if (tokenRejected || request.headers.authorization !== `Bearer ${token}`) return reply(response, 401, '401: Unauthorized');
    const method = request.method ?? 'GET';
    let parsed: Attributes = {};
    if (method === 'POST' && body.trim() !== '') {
      try {
        parsed = JSON.parse(body) as Attributes;
      } catch {
        return reply(response, 400, { message: 'Data should be valid JSON.' });
      }
    }
    if (method === 'GET' && path === '/api/') return reply(response, 200, { message: 'API running.' });
    if (method === 'GET' && path === '/api/config') return reply(response, 200, config());
    if (method === 'GET' && path === '/api/states') return reply(response, 200, [...current.values()]);
    const stateMatch = /^\/api\/states\/([^/]+)$/.exec(path);
    if (stateMatch) {
      const entityId = decodeURIComponent(stateMatch[1]!);
      if (method === 'GET') {
        const state = current.get(entityId);
        return state ? reply(response, 200, state) : reply(response, 404, { message: 'Entity not found.' });
      }
      if (method === 'POST') {
        if (typeof parsed.state !== 'string' && typeof parsed.state !== 'number') return reply(response, 400, { message: 'No state specified.' });
        const existed = current.has(entityId);
        const state = writeState(entityId, String(parsed.state), (parsed.attributes as Attributes) ?? {});
        return reply(response, existed ? 200 : 201, state, { location: `/api/states/${entityId}` });
      }
    }
    if (method === 'GET' && path === '/api/services') {
      return reply(response, 200, Object.entries(serviceDescriptions()).map(([domain, described]) => ({ domain, services: described })));
    }
    const serviceMatch = /^\/api\/services\/([^/]+)\/([^/]+)$/.exec(path);
    if (serviceMatch && method === 'POST') {
      try {
        return reply(response, 200, callService(serviceMatch[1]!, serviceMatch[2]!, parsed, {}, 'rest').changed);
      } catch (error) {
        if (error instanceof ServiceError) return reply(response, 400, '400: Bad Request');
        throw error;
      }
    }
    const historyMatch = /^\/api\/history\/period(?:\/([^/]+))?$/.exec(path);
    if (historyMatch && method === 'GET') return historyPeriod(response, historyMatch[1], address.searchParams);
    return reply(response, 404, '404: Not Found');
  }

  async function listen(): Promise<void> {
    const sockets = new WebSocketServer({ noServer: true });
    const httpServer = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      handleRest(request, response, Buffer.concat(chunks).toString('utf8'));
    });
    httpServer.on('upgrade', (request, socket, head) => {
      if (new URL(request.url ?? '/', 'http://stand-in').pathname !== '/api/websocket') return void socket.destroy();
      sockets.handleUpgrade(request, socket, head, accept);
    });
    httpServer.listen(port, '127.0.0.1');
    await once(httpServer, 'listening');
    port = (httpServer.address() as AddressInfo).port;
    server = httpServer;
  }

  function dropConnections(): void {
    for (const client of clients) client.socket.terminate();
  }

  async function stop(): Promise<void> {
    const running = server;
    if (!running) return;
    server = undefined;
    dropConnections();
    running.closeAllConnections();
    await new Promise<void>((resolve) => running.close(() => resolve()));
  }

  function startStorm(stormOptions: StormOptions): Storm {
    const targets = stormOptions.entityIds ?? [...current.values()].filter((state) => state.entity_id.startsWith('sensor.') && !Number.isNaN(Number(state.state))).map((state) => state.entity_id);
    const began = Date.now();
    let sent = 0;
    let finish: (count: number) => void = () => {};
    const finished = new Promise<number>((resolve) => (finish = resolve));
    const timer = setInterval(() => {
      const elapsed = Date.now() - began;
      const due = Math.floor((Math.min(elapsed, stormOptions.durationMs ?? Infinity) * stormOptions.eventsPerSecond) / 1000) - sent;
      for (let index = 0; index < due; index++) {
        const entityId = targets[sent % targets.length]!;
        const before = current.get(entityId)!;
        const value = Number(before.state);
        const next = Number.isNaN(value) ? String(sent) : (value + (sent % 2 === 0 ? 0.1 : -0.1)).toFixed(1);
        writeState(entityId, next, before.attributes);
        sent++;
      }
      if (stormOptions.durationMs !== undefined && elapsed >= stormOptions.durationMs) storm.stop();
    }, 5);
    const storm: Storm = {
      get sent() {
        return sent;
      },
      stop() {
        clearInterval(timer);
        storms.delete(storm);
        finish(sent);
      },
      finished,
    };
    storms.add(storm);
    return storm;
  }

  await listen();
  if (options.storm) startStorm(options.storm);

  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    token,
    get port() {
      return port;
    },
    serviceCalls,
    events,
    areas: house.areas,
    devices: house.devices,
    entities: house.entities,
    authenticatedSockets: () => [...clients].filter((client) => client.authenticated).length,
    states: () => [...current.values()],
    state: (entityId) => current.get(entityId),
    setState(entityId, state, attributes) {
      return writeState(entityId, state, { ...(current.get(entityId)?.attributes ?? {}), ...attributes });
    },
    history: (entityId) => [...(past.get(entityId) ?? [])],
    dropConnections,
    stop,
    async restart() {
      if (!server) await listen();
    },
    rejectToken(reject) {
      tokenRejected = reject;
    },
    startStorm,
    async close() {
      for (const storm of [...storms]) storm.stop();
      await stop();
      events.removeAllListeners();
    },
  };
}
