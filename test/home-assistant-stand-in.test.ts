import { once } from 'node:events';
import {
  callService,
  createConnection,
  createLongLivedTokenAuth,
  ERR_INVALID_AUTH,
  getConfig,
  getServices,
  getStates,
  subscribeEntities,
  type Connection,
  type HassEntities,
} from 'home-assistant-js-websocket';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeSocket } from './support/home-assistant-node-socket.ts';
import { startHomeAssistantStandIn, type HomeAssistantStandIn } from './support/home-assistant-stand-in.ts';

const standIns: HomeAssistantStandIn[] = [];
const connections: Connection[] = [];

async function standIn(options: Parameters<typeof startHomeAssistantStandIn>[0] = {}): Promise<HomeAssistantStandIn> {
  const started = await startHomeAssistantStandIn(options);
  standIns.push(started);
  return started;
}

async function connect(home: HomeAssistantStandIn, token = home.token): Promise<Connection> {
  const connection = await createConnection({ auth: createLongLivedTokenAuth(home.url, token), createSocket: createNodeSocket });
  connections.push(connection);
  return connection;
}

/** Resolves once the connection fires `event` (`ready`, `disconnected`, `reconnect-error`). */
function connectionEvent(connection: Connection, event: 'ready' | 'disconnected' | 'reconnect-error'): Promise<void> {
  return new Promise((resolve) => {
    const listener = () => {
      connection.removeEventListener(event, listener);
      resolve();
    };
    connection.addEventListener(event, listener);
  });
}

/**
 * One `subscribeEntities` subscriber kept for the whole test (the library tears its collection down
 * when the last subscriber leaves); `until` resolves with the entities once `accept` holds for them.
 */
function watchEntities(connection: Connection): { until(accept: (entities: HassEntities) => boolean): Promise<HassEntities> } {
  let latest: HassEntities | undefined;
  const waiters: { accept: (entities: HassEntities) => boolean; resolve: (entities: HassEntities) => void }[] = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      if (latest && waiter.accept(latest)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(latest);
      }
    }
  };
  subscribeEntities(connection, (entities) => {
    latest = entities;
    settle();
  });
  return {
    until: (accept) =>
      new Promise((resolve) => {
        waiters.push({ accept, resolve });
        settle();
      }),
  };
}

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const home of standIns.splice(0)) await home.close();
});

describe('Home Assistant stand-in with the official client', () => {
  it('serves a small house of at least 25 entities over at least 5 areas, with registries that tie them together', async () => {
    const home = await standIn();
    const connection = await connect(home);
    expect(connection.haVersion).toBe('2025.10.1');

    const states = await getStates(connection);
    expect(states.length).toBeGreaterThanOrEqual(25);
    const kitchen = states.find((state) => state.entity_id === 'light.kitchen_ceiling')!;
    expect(kitchen).toMatchObject({ state: 'on', attributes: { friendly_name: 'Kitchen ceiling', brightness: 204, color_mode: 'color_temp' } });
    for (const domain of ['light', 'switch', 'sensor', 'binary_sensor', 'climate', 'lock', 'cover', 'media_player', 'fan']) {
      expect(states.some((state) => state.entity_id.startsWith(`${domain}.`)), domain).toBe(true);
    }
    expect(states.find((state) => state.entity_id === 'sensor.kitchen_temperature')!.attributes.unit_of_measurement).toBe('°C');
    expect(states.find((state) => state.entity_id === 'climate.living_room_thermostat')!.attributes).toMatchObject({ current_temperature: 20.5, temperature: 21, hvac_modes: ['off', 'heat', 'cool', 'heat_cool'] });

    const areas = await connection.sendMessagePromise<{ area_id: string; name: string }[]>({ type: 'config/area_registry/list' });
    const devices = await connection.sendMessagePromise<{ id: string; name: string; manufacturer: string; model: string; area_id: string | null }[]>({ type: 'config/device_registry/list' });
    const entities = await connection.sendMessagePromise<{ entity_id: string; device_id: string | null; area_id: string | null }[]>({ type: 'config/entity_registry/list' });
    expect(areas.length).toBeGreaterThanOrEqual(5);
    expect(areas.map((area) => area.name)).toEqual(expect.arrayContaining(['Kitchen', 'Living Room', 'Bedroom', 'Bathroom', 'Garage']));
    expect(entities.map((entity) => entity.entity_id).sort()).toEqual(states.map((state) => state.entity_id).sort());

    const areaOf = (entityId: string) => {
      const entry = entities.find((entity) => entity.entity_id === entityId)!;
      return entry.area_id ?? devices.find((device) => device.id === entry.device_id)?.area_id ?? null;
    };
    expect(areaOf('light.kitchen_ceiling')).toBe('kitchen');
    expect(areaOf('cover.garage_door')).toBe('garage');
    expect(areaOf('lock.front_door')).toBe('hallway');
    expect(areaOf('switch.christmas_lights')).toBe('living_room');
    expect(devices.find((device) => device.id === entities.find((entity) => entity.entity_id === 'switch.christmas_lights')!.device_id)!.area_id).toBeNull();
    const areasInUse = new Set(states.map((state) => areaOf(state.entity_id)).filter(Boolean));
    expect(areasInUse.size).toBeGreaterThanOrEqual(5);
    expect(devices.find((device) => device.name === 'Kitchen ceiling')).toMatchObject({ manufacturer: 'Signify Netherlands B.V.', area_id: 'kitchen' });

    const config = await getConfig(connection);
    expect(config.unit_system.temperature).toBe('°C');
    const services = await getServices(connection);
    expect(Object.keys(services.light!)).toEqual(expect.arrayContaining(['turn_on', 'turn_off', 'toggle']));
    expect(Object.keys(services.climate!)).toEqual(expect.arrayContaining(['set_temperature', 'set_hvac_mode']));
    await expect(connection.ping()).resolves.toBeUndefined();
  });

  it('turns a light on through callService and subscribeEntities sees the change', async () => {
    const home = await standIn();
    const connection = await connect(home);
    const watched = watchEntities(connection);
    await watched.until((entities) => entities['light.bedside_lamp']?.state === 'off');
    const lit = watched.until((entities) => entities['light.bedside_lamp']?.state === 'on');

    await callService(connection, 'light', 'turn_on', { brightness_pct: 50, rgb_color: [255, 0, 0] }, { entity_id: 'light.bedside_lamp' });

    const entities = await lit;
    expect(entities['light.bedside_lamp']!.attributes).toMatchObject({ brightness: 128, color_mode: 'hs', rgb_color: [255, 0, 0], hs_color: [0, 100], friendly_name: 'Bedside lamp' });
    expect(home.state('light.bedside_lamp')!.state).toBe('on');
    expect(home.serviceCalls).toEqual([{ domain: 'light', service: 'turn_on', data: { brightness_pct: 50, rgb_color: [255, 0, 0] }, entity_ids: ['light.bedside_lamp'], via: 'websocket' }]);
  });

  it('sends state_changed events with old and new state to subscribe_events, and stops after unsubscribing', async () => {
    const home = await standIn();
    const connection = await connect(home);
    const received: { entity_id: string; old_state: { state: string } | null; new_state: { state: string } }[] = [];
    let notify = () => {};
    const unsubscribe = await connection.subscribeEvents<{ data: (typeof received)[number] }>((event) => {
      received.push(event.data);
      notify();
    }, 'state_changed');

    const arrived = new Promise<void>((resolve) => (notify = resolve));
    home.setState('binary_sensor.front_door', 'on');
    await arrived;
    expect(received).toEqual([expect.objectContaining({ entity_id: 'binary_sensor.front_door', old_state: expect.objectContaining({ state: 'off' }), new_state: expect.objectContaining({ state: 'on' }) })]);
    expect((received[0]!.new_state as unknown as { attributes: { device_class: string } }).attributes.device_class).toBe('door');

    await unsubscribe();
    const stillSubscribed = watchEntities(connection).until((entities) => entities['binary_sensor.front_door']?.state === 'off');
    home.setState('binary_sensor.front_door', 'off');
    await stillSubscribed;
    expect(received).toHaveLength(1);
  });

  it('applies realistic effects: lock, cover, climate, media player, switch toggle', async () => {
    const home = await standIn();
    const connection = await connect(home);
    await callService(connection, 'lock', 'unlock', undefined, { entity_id: 'lock.front_door' });
    await callService(connection, 'cover', 'open_cover', { entity_id: 'cover.garage_door' });
    await callService(connection, 'climate', 'set_temperature', { temperature: 19.5 }, { entity_id: 'climate.living_room_thermostat' });
    await callService(connection, 'climate', 'set_hvac_mode', { hvac_mode: 'off' }, { entity_id: 'climate.living_room_thermostat' });
    await callService(connection, 'media_player', 'select_source', { source: 'Netflix' }, { entity_id: 'media_player.living_room_tv' });
    await callService(connection, 'media_player', 'volume_set', { volume_level: 0.3 }, { entity_id: 'media_player.living_room_tv' });
    await callService(connection, 'switch', 'toggle', undefined, { area_id: 'bedroom' });

    expect(home.state('lock.front_door')!.state).toBe('unlocked');
    expect(home.state('cover.garage_door')).toMatchObject({ state: 'open', attributes: { current_position: 100 } });
    expect(home.state('climate.living_room_thermostat')).toMatchObject({ state: 'off', attributes: { temperature: 19.5, hvac_action: 'off' } });
    expect(home.state('media_player.living_room_tv')).toMatchObject({ state: 'on', attributes: { source: 'Netflix', volume_level: 0.3 } });
    expect(home.state('switch.electric_blanket')!.state).toBe('on');
    expect(home.serviceCalls.at(-1)!.entity_ids).toEqual(['switch.electric_blanket']);
  });

  it('answers an unknown service with not_found and, when told to, an unknown entity with an error, changing nothing', async () => {
    const home = await standIn({ missingEntities: 'error' });
    const connection = await connect(home);
    await expect(callService(connection, 'light', 'explode', undefined, { entity_id: 'light.kitchen_ceiling' })).rejects.toMatchObject({ code: 'not_found', message: 'Action light.explode not found.' });
    await expect(callService(connection, 'light', 'turn_on', undefined, { entity_id: 'light.attic' })).rejects.toMatchObject({ code: 'service_validation_error', message: expect.stringContaining('light.attic') });
    await expect(callService(connection, 'climate', 'set_hvac_mode', { hvac_mode: 'dry' }, { entity_id: 'climate.living_room_thermostat' })).rejects.toMatchObject({ code: 'service_validation_error' });
    expect(home.state('climate.living_room_thermostat')!.state).toBe('heat');
    expect(home.serviceCalls.map((call) => call.error?.code)).toEqual(['not_found', 'service_validation_error', 'service_validation_error']);
    await expect(connection.sendMessagePromise({ type: 'no_such_command' })).rejects.toMatchObject({ code: 'unknown_command' });
  });

  it('behaves like real HA for a missing entity by default: success with nothing changed', async () => {
    const home = await standIn();
    const response = await fetch(`${home.url}/api/services/light/turn_on`, { method: 'POST', headers: { authorization: `Bearer ${home.token}` }, body: JSON.stringify({ entity_id: 'light.attic' }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it('rejects a bad token with ERR_INVALID_AUTH, and any token while told to', async () => {
    const home = await standIn();
    await expect(connect(home, 'not-the-token')).rejects.toBe(ERR_INVALID_AUTH);
    home.rejectToken(true);
    await expect(connect(home)).rejects.toBe(ERR_INVALID_AUTH);
    expect((await fetch(`${home.url}/api/`, { headers: { authorization: `Bearer ${home.token}` } })).status).toBe(401);
    home.rejectToken(false);
    await expect(connect(home)).resolves.toBeDefined();
  });

  it('is reconnected to by the client after dropConnections, with subscriptions restored', async () => {
    const home = await standIn();
    const connection = await connect(home);
    const watched = watchEntities(connection);
    await watched.until((entities) => entities['switch.coffee_maker']?.state === 'off');
    const dropped = connectionEvent(connection, 'disconnected');
    const ready = connectionEvent(connection, 'ready');
    home.dropConnections();
    await dropped;
    await ready;
    expect(connection.connected).toBe(true);
    const brewing = watched.until((entities) => entities['switch.coffee_maker']?.state === 'on');
    home.setState('switch.coffee_maker', 'on');
    await brewing;
    expect((await getStates(connection)).length).toBe(home.states().length);
  });

  it('goes away with stop() and comes back on the same port with restart(), keeping its states', async () => {
    const home = await standIn();
    const connection = await connect(home);
    await callService(connection, 'light', 'turn_off', undefined, { entity_id: 'light.kitchen_ceiling' });
    const port = home.port;
    const dropped = connectionEvent(connection, 'disconnected');
    await home.stop();
    await dropped;
    await expect(fetch(`${home.url}/api/`)).rejects.toThrow();
    const ready = connectionEvent(connection, 'ready');
    await home.restart();
    await ready;
    expect(home.port).toBe(port);
    expect((await getStates(connection)).find((state) => state.entity_id === 'light.kitchen_ceiling')!.state).toBe('off');
  });
});

describe('Home Assistant stand-in REST API', () => {
  async function rest(home: HomeAssistantStandIn, path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${home.url}${path}`, { ...init, headers: { authorization: `Bearer ${home.token}`, 'content-type': 'application/json' } });
  }

  it('needs a bearer token and answers /api/, /api/states and /api/states/<id>', async () => {
    const home = await standIn();
    expect((await fetch(`${home.url}/api/`)).status).toBe(401);
    expect((await fetch(`${home.url}/api/states`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect(await (await rest(home, '/api/')).json()).toEqual({ message: 'API running.' });
    const states = (await (await rest(home, '/api/states')).json()) as { entity_id: string }[];
    expect(states.map((state) => state.entity_id)).toContain('lock.front_door');
    expect(await (await rest(home, '/api/states/lock.front_door')).json()).toMatchObject({ entity_id: 'lock.front_door', state: 'locked', attributes: { friendly_name: 'Front door' } });
    const missing = await rest(home, '/api/states/lock.back_door');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ message: 'Entity not found.' });
  });

  it('runs a service and answers the states that changed; 400 for an unknown service', async () => {
    const home = await standIn();
    const response = await rest(home, '/api/services/light/turn_on', { method: 'POST', body: JSON.stringify({ entity_id: ['light.hallway', 'light.office_desk_lamp'], brightness: 100 }) });
    expect(response.status).toBe(200);
    const changed = (await response.json()) as { entity_id: string; state: string; attributes: { brightness: number } }[];
    expect(changed.map((state) => [state.entity_id, state.state, state.attributes.brightness])).toEqual([
      ['light.hallway', 'on', 100],
      ['light.office_desk_lamp', 'on', 100],
    ]);
    const again = await rest(home, '/api/services/light/turn_on', { method: 'POST', body: JSON.stringify({ entity_id: 'light.hallway', brightness: 100 }) });
    expect(await again.json()).toEqual([]);
    expect((await rest(home, '/api/services/light/explode', { method: 'POST', body: '{}' })).status).toBe(400);
    expect(home.serviceCalls.map((call) => `${call.via} ${call.domain}.${call.service}`)).toEqual(['rest light.turn_on', 'rest light.turn_on', 'rest light.explode']);
  });

  it('answers history for a period: the seeded past day plus every change since', async () => {
    const home = await standIn();
    const start = new Date(Date.now() - 24 * 3_600_000).toISOString();
    const seeded = (await (await rest(home, `/api/history/period/${start}?filter_entity_id=sensor.kitchen_temperature,lock.front_door`)).json()) as { entity_id: string; state: string }[][];
    expect(seeded.map((states) => states[0]!.entity_id)).toEqual(['sensor.kitchen_temperature', 'lock.front_door']);
    expect(seeded[0]!.length).toBeGreaterThanOrEqual(20);
    expect(seeded[0]!.every((state) => !Number.isNaN(Number(state.state)))).toBe(true);
    expect(new Set(seeded[1]!.map((state) => state.state))).toEqual(new Set(['locked', 'unlocked']));

    const changedAt = Date.now();
    home.setState('sensor.kitchen_temperature', '23.5');
    const since = (await (await rest(home, `/api/history/period/${new Date(changedAt - 1).toISOString()}?filter_entity_id=sensor.kitchen_temperature&end_time=${encodeURIComponent(new Date(Date.now() + 1000).toISOString())}`)).json()) as { state: string }[][];
    expect(since[0]!.map((state) => state.state).at(-1)).toBe('23.5');
    expect((await rest(home, `/api/history/period/${start}`)).status).toBe(400);
  });

  it('seeds a past that reads like a real recorder: in time order, each entry a change, ending at the current state', async () => {
    const home = await standIn();
    const dayAgo = Date.now() - 24 * 3_600_000;
    for (const state of home.states()) {
      const past = home.history(state.entity_id);
      expect(past.at(-1), state.entity_id).toBe(state);
      expect(past.length, state.entity_id).toBeGreaterThanOrEqual(2);
      expect(Date.parse(past[0]!.last_updated), state.entity_id).toBeGreaterThanOrEqual(dayAgo - 1_000);
      for (let index = 1; index < past.length; index++) {
        const [before, after] = [past[index - 1]!, past[index]!];
        expect(Date.parse(after.last_updated), state.entity_id).toBeGreaterThan(Date.parse(before.last_updated));
        if (after.state === before.state) {
          expect(after.attributes, state.entity_id).not.toEqual(before.attributes);
          expect(after.last_changed, state.entity_id).toBe(before.last_changed);
        } else {
          expect(after.last_changed, state.entity_id).toBe(after.last_updated);
        }
      }
    }
    const minimal = (await (await rest(home, `/api/history/period/${new Date(dayAgo).toISOString()}?filter_entity_id=sensor.outdoor_temperature&minimal_response&no_attributes`)).json()) as Record<string, unknown>[][];
    expect(Object.keys(minimal[0]![1]!).sort()).toEqual(['last_changed', 'state']);
    expect(minimal[0]!.at(-1)).toMatchObject({ entity_id: 'sensor.outdoor_temperature', attributes: {} });
  });
});

describe('Home Assistant stand-in load controls', () => {
  it('generates extra entities over the areas for benchmarks', async () => {
    const home = await standIn({ extraEntities: 2_000 });
    const connection = await connect(home);
    const states = await getStates(connection);
    expect(states.length).toBeGreaterThanOrEqual(2_025);
    const entities = await connection.sendMessagePromise<{ device_id: string }[]>({ type: 'config/entity_registry/list' });
    expect(entities).toHaveLength(states.length);
  });

  it('emits a storm of state_changed events at the rate asked for', async () => {
    const home = await standIn();
    const connection = await connect(home);
    let received = 0;
    await connection.subscribeEvents(() => received++, 'state_changed');
    const began = Date.now();
    const storm = home.startStorm({ eventsPerSecond: 1_000, durationMs: 300 });
    const sent = await storm.finished;
    expect(sent).toBe(300);
    expect(Date.now() - began).toBeGreaterThanOrEqual(300);
    const lastChange = once(home.events, 'state_changed');
    home.setState('sensor.office_co2', '800');
    await lastChange;
    await connection.ping();
    expect(received).toBe(301);
  });
});
