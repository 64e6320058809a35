import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { IntegrationStatus } from '../src/integrations/integration-registry.ts';
import { IntegrationRegistry } from '../src/integrations/integration-registry.ts';
import { HomeAssistant } from '../src/integrations/home-assistant/home-assistant.ts';
import { createHomeAssistantTool } from '../src/tools/builtin/home-assistant.ts';
import { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { startHomeAssistantStandIn, type HomeAssistantStandIn } from './support/home-assistant-stand-in.ts';
import { runTool } from './support/tool-context.ts';

let standIn: HomeAssistantStandIn | undefined;
let direct: HomeAssistant | undefined;
const sockets: EventSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await direct?.close();
  await standIn?.close();
  direct = standIn = undefined;
});
// Registered after the hook above, so the app is closed before what it uses is removed (hooks run last-registered first).
const startApp = useHearth();

/** A connection made outside the app, resolved once it reports `connected`. */
async function connectDirectly(house: HomeAssistantStandIn): Promise<HomeAssistant> {
  const integrations = new IntegrationRegistry();
  const connected = new Promise<void>((resolve) => integrations.on('changed', (status) => status.status === 'connected' && resolve()));
  direct = new HomeAssistant({ url: house.url, token: house.token, integrations, logger: pino({ level: 'silent' }) });
  direct.start();
  await connected;
  return direct;
}

async function eventsSocket(server: Hearth): Promise<EventSocket> {
  const socket = await EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
  sockets.push(socket);
  return socket;
}

function homeAssistantStatus(socket: EventSocket, status: IntegrationStatus['status'], timeoutMs = 10_000) {
  return socket.nextMatching(
    (event) => (event as { type: string }).type === 'integration_status' && (event as unknown as IntegrationStatus).name === 'home_assistant' && (event as unknown as IntegrationStatus).status === status,
    `home_assistant ${status}`,
    timeoutMs,
  ) as unknown as Promise<IntegrationStatus>;
}

/** Hearth connected to the stand-in; resolves once GET /integrations says so. */
async function hearthWithHouse(env: Record<string, string> = {}): Promise<{ server: Hearth; events: EventSocket }> {
  standIn = await startHomeAssistantStandIn();
  const hearth = await startApp({ env: { HA_URL: standIn.url, HA_TOKEN: standIn.token, ...env } });
  const events = await eventsSocket(hearth);
  const listed = await hearth.request('GET', '/integrations');
  if (listed.body.integrations.find((entry: IntegrationStatus) => entry.name === 'home_assistant')?.status !== 'connected') {
    await homeAssistantStatus(events, 'connected');
  }
  return { server: hearth, events };
}

const call = (args: Record<string, unknown>) => ({ name: 'home_assistant', arguments: args });

/** A smart_home session's socket, closed after the test; `content` is sent as its first message. */
async function smartHomeSession(server: Hearth, content?: string) {
  const socket = await server.connect(await server.createSession('smart_home'));
  sockets.push(socket);
  if (content !== undefined) socket.send({ type: 'message', content });
  return socket;
}

describe('home_assistant search', () => {
  it('finds the right entity from everyday words, in compact lines', async () => {
    standIn = await startHomeAssistantStandIn();
    const tool = createHomeAssistantTool(await connectDirectly(standIn));
    const first = async (query: string) => {
      const result = await runTool(tool, { action: 'search', query });
      expect(result.success).toBe(true);
      return result.output.split('\n');
    };

    const kitchen = await first('kitchen light');
    expect(kitchen[0]).toBe('light.kitchen_ceiling "Kitchen ceiling" [Kitchen] on, brightness 204, color temp kelvin 2700, rgb color [255,167,89]');
    expect(kitchen[1]).toMatch(/^light\.kitchen_under_cabinet /);
    expect((await first('bedroom temperature'))[0]).toMatch(/^sensor\.bedroom_temperature "Bedroom temperature" \[Bedroom\] 19\.2 °C/);
    expect((await first('front door'))[0]).toMatch(/^lock\.front_door "Front door" \[Hallway\] locked/);
    expect((await first('living room lamp'))[0]).toMatch(/^light\.living_room_floor_lamp /);
    expect((await first('thermostat'))[0]).toMatch(/^climate\.living_room_thermostat .*current temperature 20\.5, temperature 21/);
    const garage = await first('garage');
    expect(garage.slice(0, 4).some((line) => line.startsWith('cover.garage_door "Garage door" [Garage] closed'))).toBe(true);
    // Every word matched beats some: the bedroom's lights come before other rooms' lights and the bedroom's sensors.
    const bedroomLights = await first('bedroom lights');
    expect(bedroomLights.slice(0, 2).map((line) => line.split(' ')[0]).sort()).toEqual(['light.bedroom_ceiling', 'light.bedside_lamp']);

    const nothing = await runTool(tool, { action: 'search', query: 'submarine' });
    expect(nothing).toMatchObject({ success: false });
    expect(nothing.output).toMatch(/No entity matches "submarine"/);
  });

  it('keeps the index current from state_changed, and answers state, areas, history and services', async () => {
    standIn = await startHomeAssistantStandIn();
    const ha = await connectDirectly(standIn);
    const tool = createHomeAssistantTool(ha);
    const changed = new Promise<void>((resolve) => ha.onStateChanged((entityId) => entityId === 'sensor.kitchen_temperature' && resolve()));
    standIn.setState('sensor.kitchen_temperature', '23.5');
    await changed;
    expect((await runTool(tool, { action: 'state', entity_id: 'sensor.kitchen_temperature' })).output).toMatch(/^sensor\.kitchen_temperature "Kitchen temperature" \[Kitchen\] 23\.5 °C\ndevice: Kitchen climate sensor/);

    const areas = await runTool(tool, { action: 'areas' });
    expect(areas.output).toMatch(/^Bathroom \(bathroom\): \d+ entities — /m);
    expect(areas.output.split('\n')).toHaveLength(7);

    const history = await runTool(tool, { action: 'history', entity_id: 'sensor.kitchen_temperature', hours: 24 });
    expect(history.success).toBe(true);
    expect(history.output).toMatch(/^sensor\.kitchen_temperature \(last 24 h\): first [\d.]+ °C at .*; last 23\.5 °C at .*; \d+ changes; min [\d.]+ °C; max [\d.]+ °C; mean/);
    expect(history.output.split('\n')).toHaveLength(1);

    const services = await runTool(tool, { action: 'services', domain: 'light' });
    expect(services.output).toMatch(/^light\.turn_on \(.*brightness_pct/m);

    const unknown = await runTool(tool, { action: 'state', entity_id: 'light.kitchen' });
    expect(unknown).toMatchObject({ success: false });
    expect(unknown.output).toMatch(/Unknown entity "light\.kitchen"\. Close matches: light\.kitchen_ceiling, light\.kitchen_under_cabinet, /);
  });

  it('a stop aborts the REST call: nothing is sent and the result says so', async () => {
    standIn = await startHomeAssistantStandIn();
    const tool = createHomeAssistantTool(await connectDirectly(standIn));
    const stop = new AbortController();
    stop.abort();
    const result = await runTool(tool, { action: 'call_service', domain: 'light', service: 'turn_on', entity_id: 'light.garage' }, { signal: stop.signal });
    expect(result).toEqual({ success: false, output: 'Stopped before Home Assistant answered.' });
    expect(standIn.serviceCalls).toHaveLength(0);
    expect(standIn.state('light.garage')!.state).toBe('off');
  });

  it('searches 2,000 entities in under 2 ms (median)', async () => {
    standIn = await startHomeAssistantStandIn({ extraEntities: 2_000 });
    const ha = await connectDirectly(standIn);
    expect(ha.index.size).toBeGreaterThan(2_000);
    const queries = ['kitchen light', 'bedroom temperature', 'garage', 'front door', 'office plug power', 'living room lamp'];
    const times: number[] = [];
    for (let round = 0; round < 50; round++) {
      for (const query of queries) {
        const started = performance.now();
        ha.index.search(query);
        times.push(performance.now() - started);
      }
    }
    times.sort((left, right) => left - right);
    expect(times[Math.floor(times.length / 2)]).toBeLessThan(2);
  });
});

describe('home_assistant in a smart_home session', () => {
  it('turns a light on through a whole agent turn, and the answer says what changed', async () => {
    const { server } = await hearthWithHouse();
    expect(standIn!.state('light.bedroom_ceiling')!.state).toBe('off');
    server.llm.script({ toolCalls: [call({ action: 'call_service', domain: 'light', service: 'turn_on', entity_id: 'light.bedroom_ceiling', data: { brightness_pct: 60 } })] }, { content: 'The bedroom light is on.' });
    const socket = await smartHomeSession(server, 'Turn on the bedroom light');

    const result = await socket.next('tool_call');
    expect(result.success).toBe(true);
    expect(result.result).toMatch(/^Called light\.turn_on on light\.bedroom_ceiling\.\nChanged:\nlight\.bedroom_ceiling "Bedroom ceiling" \[Bedroom\] on, brightness 153/);
    await socket.next('stream_end');
    expect(standIn!.state('light.bedroom_ceiling')).toMatchObject({ state: 'on', attributes: { brightness: 153 } });
    expect(standIn!.serviceCalls.at(-1)).toMatchObject({ domain: 'light', service: 'turn_on', via: 'rest', entity_ids: ['light.bedroom_ceiling'] });
    // The token reaches neither the model nor the page.
    expect(JSON.stringify(server.llm.requests)).not.toContain(standIn!.token);
    expect(JSON.stringify(socket.events)).not.toContain(standIn!.token);
  });

  it('asks before unlocking the front door and does nothing when denied', async () => {
    const { server } = await hearthWithHouse();
    server.llm.script({ toolCalls: [call({ action: 'call_service', domain: 'lock', service: 'unlock', entity_id: 'lock.front_door' })] }, { content: 'I left it locked.' });
    const socket = await smartHomeSession(server, 'Unlock the front door');

    const required = await socket.next('approval_required');
    expect(required).toMatchObject({ tool: 'home_assistant', subject: 'lock.unlock lock.front_door', reason: 'rule home_assistant(lock.*)' });
    socket.send({ type: 'approve', call_id: required.call_id, decision: 'deny' });
    const result = await socket.next('tool_call');
    expect(result.success).toBe(false);
    expect(result.result).toMatch(/denied/);
    expect((await socket.next('stream_end')).content).toBe('I left it locked.');
    expect(standIn!.state('lock.front_door')!.state).toBe('locked');
    expect(standIn!.serviceCalls).toHaveLength(0);
  });

  it("refuses HA's generic services on a room, a device or everything, which would pass the approval rules unseen", async () => {
    const { server } = await hearthWithHouse();
    const attacks = [
      { action: 'call_service', domain: 'homeassistant', service: 'turn_on', data: { area_id: 'garage' } },
      { action: 'call_service', domain: 'homeassistant', service: 'toggle', entity_id: 'all' },
      { action: 'call_service', domain: 'homeassistant', service: 'turn_on', data: { device_id: 'garage_door_opener' } },
      { action: 'call_service', service: 'homeassistant.turn_on', data: { target: { area_id: 'garage' } } },
    ];
    server.llm.script({ toolCalls: attacks.map(call) }, { content: 'None of that worked.' });
    const socket = await smartHomeSession(server, 'Open everything in the garage');
    await socket.next('stream_end');
    const results = socket.ofType('tool_call');
    expect(results).toHaveLength(attacks.length);
    for (const result of results) {
      expect(result).toMatchObject({ success: false, result: expect.stringMatching(/^homeassistant\.\w+ with .* is refused: name the entities/) });
    }
    expect(socket.ofType('approval_required')).toEqual([]);
    expect(standIn!.serviceCalls).toHaveLength(0);
    expect(standIn!.state('cover.garage_door')!.state).toBe('closed');
  });

  it('refuses an unknown entity or service, naming it and what to do', async () => {
    const { server } = await hearthWithHouse();
    server.llm.script(
      { toolCalls: [call({ action: 'call_service', domain: 'light', service: 'turn_on', entity_id: 'light.attic' }), call({ action: 'call_service', domain: 'light', service: 'explode', entity_id: 'light.garage' })] },
      { content: 'Neither worked.' },
    );
    const socket = await smartHomeSession(server, 'Go');
    await socket.next('stream_end');
    const [entity, service] = socket.ofType('tool_call');
    expect(entity).toMatchObject({ success: false });
    expect(entity!.result).toMatch(/Unknown entity "light\.attic"\..*"search"/);
    expect(service).toMatchObject({ success: false });
    expect(service!.result).toMatch(/Unknown service light\.explode\. light offers: .*turn_on/);
    expect(standIn!.serviceCalls).toHaveLength(0);
  });

  it('survives Home Assistant going away mid-session and coming back', async () => {
    const { server, events } = await hearthWithHouse();
    const socket = await smartHomeSession(server);

    await standIn!.stop();
    await homeAssistantStatus(events, 'connecting');
    const away = await homeAssistantStatus(events, 'failed');
    expect(away.message).toMatch(/unreachable \(ECONNREFUSED\); retrying/);

    server.llm.script({ toolCalls: [call({ action: 'call_service', domain: 'light', service: 'turn_on', entity_id: 'light.garage' })] }, { content: 'Home Assistant is away.' });
    socket.send({ type: 'message', content: 'Garage light on' });
    const failed = await socket.next('tool_call');
    expect(failed.success).toBe(false);
    expect(failed.result).toMatch(/Home Assistant at http:\/\/127\.0\.0\.1:\d+ is unreachable .*try again shortly/);
    await socket.next('stream_end');

    await standIn!.restart();
    const back = await homeAssistantStatus(events, 'connected');
    expect(back.details).toMatchObject({ entities: standIn!.entities.length, areas: 7 });

    server.llm.script({ toolCalls: [call({ action: 'call_service', domain: 'light', service: 'turn_on', entity_id: 'light.garage' })] }, { content: 'Done.' });
    socket.send({ type: 'message', content: 'Try again' });
    const worked = await socket.next('tool_call');
    expect(worked.success).toBe(true);
    expect(worked.result).toMatch(/light\.garage "Garage light" \[Garage\] on/);
    expect(standIn!.state('light.garage')!.state).toBe('on');
    await socket.next('stream_end');
  });

  it('connects once Home Assistant comes up after Hearth started', async () => {
    standIn = await startHomeAssistantStandIn();
    await standIn.stop();
    const hearth = await startApp({ env: { HA_URL: standIn.url, HA_TOKEN: standIn.token } });
    const events = await eventsSocket(hearth);
    const listed = await hearth.request('GET', '/integrations');
    const first = listed.body.integrations.find((entry: IntegrationStatus) => entry.name === 'home_assistant');
    const failed = first.status === 'failed' ? first : await homeAssistantStatus(events, 'failed');
    expect(failed.message).toMatch(/unreachable \(ECONNREFUSED\)/);
    await standIn.restart();
    expect((await homeAssistantStatus(events, 'connected')).details).toMatchObject({ entities: standIn.entities.length, areas: 7 });
  });

  it('reports a rejected token on GET /integrations and in the tool, without the token', async () => {
    standIn = await startHomeAssistantStandIn();
    const hearth = await startApp({ env: { HA_URL: standIn.url, HA_TOKEN: 'not-the-right-token' } });
    const events = await eventsSocket(hearth);
    const listed = await hearth.request('GET', '/integrations');
    if (listed.body.integrations.find((entry: IntegrationStatus) => entry.name === 'home_assistant')?.status !== 'failed') await homeAssistantStatus(events, 'failed');
    const { body } = await hearth.request('GET', '/integrations');
    const status = body.integrations.find((entry: IntegrationStatus) => entry.name === 'home_assistant');
    expect(status).toMatchObject({ status: 'failed', message: expect.stringMatching(/rejected the token \(HA_TOKEN\).*Long-lived|long-lived access token/) });
    expect(JSON.stringify(body)).not.toContain('not-the-right-token');

    hearth.llm.script({ toolCalls: [call({ action: 'search', query: 'kitchen light' })] }, { content: 'The token is wrong.' });
    const socket = await smartHomeSession(hearth, 'Kitchen light?');
    const result = await socket.next('tool_call');
    expect(result.success).toBe(false);
    expect(result.result).toMatch(/rejected the token/);
    expect(result.result).not.toContain('not-the-right-token');
    await socket.next('stream_end');
  });

  it('says how to configure Home Assistant when HA_URL is empty', async () => {
    const hearth = await startApp();
    const { body } = await hearth.request('GET', '/integrations');
    expect(body.integrations.find((entry: IntegrationStatus) => entry.name === 'home_assistant')).toMatchObject({ status: 'not_configured' });
    const { message } = body.integrations.find((entry: IntegrationStatus) => entry.name === 'home_assistant');
    expect(message).toMatch(/^HA_URL is not set: set HA_URL .* and HA_TOKEN .*long-lived access token.*Security → Long-lived access tokens/);

    hearth.llm.script({ toolCalls: [call({ action: 'search', query: 'kitchen light' })] }, { content: 'It is not set up.' });
    const socket = await smartHomeSession(hearth, 'Kitchen light?');
    const result = await socket.next('tool_call');
    expect(result.success).toBe(false);
    expect(result.result).toMatch(/not configured\. Set HA_URL .* and HA_TOKEN .*Security → Long-lived access tokens/);
    await socket.next('stream_end');
  });
});
