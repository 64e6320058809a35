import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import mqtt, { type MqttClient } from 'mqtt';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { IntegrationRegistry, type IntegrationStatus } from '../src/integrations/integration-registry.ts';
import { MqttConnection, type MqttMessage } from '../src/integrations/mqtt/mqtt-connection.ts';
import { createMqttTool, type MqttBroker } from '../src/tools/builtin/mqtt.ts';
import type { Tool } from '../src/tools/tool.ts';
import { EventSocket } from './support/event-socket.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { startMosquitto, type Mosquitto } from './support/mosquitto.ts';
import { runTool } from './support/tool-context.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A plain mqtt.js client beside Hearth: it publishes what the house would, and records what Hearth publishes. */
async function observer(url: string, filter?: string, login: { username?: string; password?: string } = {}) {
  const client: MqttClient = await mqtt.connectAsync(url, { ...login, reconnectPeriod: 0 });
  cleanups.push(() => client.endAsync(true));
  const received: { topic: string; text: string }[] = [];
  client.on('message', (topic, payload) => received.push({ topic, text: payload.toString() }));
  if (filter) await client.subscribeAsync(filter, { qos: 1 });
  return { client, received };
}

async function connect(url: string, login: { username?: string; password?: string } = {}, logLines: string[] = []) {
  const integrations = new IntegrationRegistry();
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  const connection = new MqttConnection({
    url,
    username: login.username ?? '',
    password: login.password ?? '',
    integrations,
    logger: pino({ level: 'debug' }, logStream),
  });
  cleanups.push(() => connection.close());
  const settled = statusReached(integrations, (status) => status.status === 'connected' || status.status === 'failed');
  connection.start();
  return { connection, integrations, status: await settled, tool: createMqttTool(connection) as Tool };
}

function statusReached(integrations: IntegrationRegistry, predicate: (status: IntegrationStatus) => boolean): Promise<IntegrationStatus> {
  return new Promise((resolve) => {
    const listener = (status: IntegrationStatus) => {
      if (status.name !== 'mqtt' || !predicate(status)) return;
      integrations.off('changed', listener);
      resolve(status);
    };
    integrations.on('changed', listener);
  });
}

function nextMessage(connection: MqttConnection, topic: string): Promise<MqttMessage> {
  return new Promise((resolve) => {
    const listener = (message: MqttMessage) => {
      if (message.topic !== topic) return;
      connection.off('message', listener);
      resolve(message);
    };
    connection.on('message', listener);
  });
}


describe('mqtt tool against a real Mosquitto', () => {
  let broker: Mosquitto;
  let prefix: string;
  beforeAll(async () => {
    broker = await startMosquitto();
  });
  afterAll(async () => {
    await broker.close();
  });
  afterEach(() => {
    prefix = '';
  });
  const topic = (rest: string) => {
    prefix ||= `test-${randomUUID().slice(0, 8)}`;
    return `${prefix}/${rest}`;
  };

  it('publishes what the house sees, and reads it back as a compact retained line', async () => {
    const { tool, status } = await connect(broker.url);
    expect(status).toEqual({ name: 'mqtt', status: 'connected', details: { broker: broker.url } });
    const house = await observer(broker.url, topic('#'));

    const published = await runTool(tool, { action: 'publish', topic: topic('kitchen/plug'), payload: { state: 'ON', power: 12.5 }, retain: true, qos: 1 });
    expect(published).toEqual({ success: true, output: `Published 27 bytes to ${topic('kitchen/plug')} (qos 1, retained).` });
    const plain = await runTool(tool, { action: 'publish', topic: topic('kitchen/plug/set'), payload: 'OFF', qos: 2 });
    expect(plain.output).toBe(`Published 3 bytes to ${topic('kitchen/plug/set')} (qos 2, not retained).`);
    await new Promise<void>((resolve) => (house.received.length >= 2 ? resolve() : house.client.on('message', () => house.received.length >= 2 && resolve())));
    expect(house.received).toEqual([
      { topic: topic('kitchen/plug'), text: '{"state":"ON","power":12.5}' },
      { topic: topic('kitchen/plug/set'), text: 'OFF' },
    ]);

    const read = await runTool(tool, { action: 'read', topic: topic('kitchen/plug'), wait_ms: 300 });
    expect(read).toEqual({
      success: true,
      output: `1 message on ${topic('kitchen/plug')} (1 retained; listened 300 ms):\n${topic('kitchen/plug')} {"state":"ON","power":12.5} (retained)`,
    });
  });

  it('reads + and # filters: retained messages and live ones, each payload as readable text', async () => {
    const { connection, tool } = await connect(broker.url);
    const house = await observer(broker.url);
    await house.client.publishAsync(topic('kitchen/plug'), '{ "state": "ON" }', { retain: true, qos: 1 });
    await house.client.publishAsync(topic('hall/plug'), 'OFF', { retain: true, qos: 1 });
    await house.client.publishAsync(topic('kitchen/light/state'), Buffer.from([0, 1, 2, 255, ...new Array(20).fill(7)]), { retain: true, qos: 1 });
    await house.client.publishAsync(topic('hall/log'), 'x'.repeat(1000), { retain: true, qos: 1 });

    const plugs = await runTool(tool, { action: 'read', topic: topic('+/plug'), wait_ms: 300 });
    expect(plugs.output.split('\n').slice(1).sort()).toEqual([`${topic('hall/plug')} OFF (retained)`, `${topic('kitchen/plug')} {"state":"ON"} (retained)`]);

    const listening = once(connection, 'listening');
    const everything = runTool(tool, { action: 'read', topic: topic('#'), wait_ms: 1500 });
    await listening;
    await house.client.publishAsync(topic('kitchen/plug'), '{"state":"OFF"}', { qos: 1 });
    const lines = (await everything).output.split('\n');
    expect(lines[0]).toBe(`5 messages on ${topic('#')} (4 retained; listened 1500 ms):`);
    expect(lines).toContain(`${topic('kitchen/light/state')} (binary, 24 bytes: 00 01 02 ff 07 07 07 07 07 07 07 07 07 07 07 07 …) (retained)`);
    expect(lines).toContain(`${topic('hall/log')} ${'x'.repeat(400)}… (cut: 1000 characters, 1000 bytes) (retained)`);
    expect(lines.at(-1)).toBe(`${topic('kitchen/plug')} {"state":"OFF"}`);
    expect(connection.subscriptions).toEqual([]);

    const nothing = await runTool(tool, { action: 'read', topic: topic('garage/+'), wait_ms: 200 });
    expect(nothing).toEqual({ success: true, output: expect.stringMatching(/^No messages on .*garage\/\+ within 200 ms, and none retained/) });
  });

  it('stops at 50 messages, and a read lasts as long as it was asked to wait', async () => {
    const { tool } = await connect(broker.url);
    const house = await observer(broker.url);
    for (let index = 0; index < 60; index++) await house.client.publishAsync(topic(`sensor/${index}`), String(index), { retain: true, qos: 1 });

    let startedAt = Date.now();
    const capped = await runTool(tool, { action: 'read', topic: topic('sensor/#'), wait_ms: 10_000 });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    const lines = capped.output.split('\n');
    expect(lines[0]).toMatch(/^50 messages on .* \(50 retained; listened \d+ ms\):$/);
    expect(lines.filter((line) => line.endsWith('(retained)'))).toHaveLength(50);
    expect(lines.at(-1)).toBe('Stopped at 50 messages, the most one read returns: narrow the topic filter to see others.');

    // The default and the cap reach the broker as its wait (checked in 'mqtt tool waits'); here the broker keeps to a wait.
    startedAt = Date.now();
    const quiet = await runTool(tool, { action: 'read', topic: topic('quiet'), wait_ms: 500 });
    const elapsed = Date.now() - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(500);
    expect(elapsed).toBeLessThan(2_500);
    expect(quiet.output).toMatch(/within 500 ms, and none retained/);
  }, 30_000);

  it('a stop ends a read at once with what arrived, and unsubscribes', async () => {
    const { connection, tool } = await connect(broker.url);
    const house = await observer(broker.url);
    const stop = new AbortController();
    const listening = once(connection, 'listening');
    const startedAt = Date.now();
    const reading = runTool(tool, { action: 'read', topic: topic('door/+'), wait_ms: 10_000 }, { signal: stop.signal });
    await listening;
    const arrived = nextMessage(connection, topic('door/front'));
    await house.client.publishAsync(topic('door/front'), 'open', { qos: 1 });
    await arrived;
    stop.abort();
    const result = await reading;
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(result.output).toBe(`1 message on ${topic('door/+')} (0 retained; listened ${result.output.match(/listened (\d+) ms/)![1]} ms):\n${topic('door/front')} open\nStopped before the wait was over.`);
    expect(connection.subscriptions).toEqual([]);
  });

  it('refuses wildcards in a publish, malformed filters and empty topics, saying what to send', async () => {
    const { tool } = await connect(broker.url);
    const house = await observer(broker.url, topic('#'));
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ action: 'publish', topic: topic('+/set'), payload: 'ON' }, /holds a wildcard \(\+ or #\), which only a read may use/],
      [{ action: 'publish', topic: '', payload: 'ON' }, /Send topic: the topic to publish to/],
      [{ action: 'read', topic: topic('#/state') }, /# stands alone as the last level/],
      [{ action: 'read', topic: topic('kitchen+/state') }, /\+ stands alone for one whole level/],
      [{ action: 'read', topic: '' }, /Send topic: a topic or a filter/],
    ];
    for (const [args, message] of cases) {
      const result = await runTool(tool, args);
      expect(result.success, JSON.stringify(args)).toBe(false);
      expect(result.output).toMatch(message);
    }
    // The house saw none of the refused publishes: the next message it gets is this one.
    await runTool(tool, { action: 'publish', topic: topic('marker'), payload: 'after' });
    await new Promise<void>((resolve) => (house.received.length > 0 ? resolve() : house.client.once('message', () => resolve())));
    expect(house.received).toEqual([{ topic: topic('marker'), text: 'after' }]);
  });

  it('MQTT_URL takes an mqtt(s) or ws(s) URL', () => {
    expect(parseConfig({ MQTT_URL: 'mqtts://broker.lan:8883' }).MQTT_URL).toBe('mqtts://broker.lan:8883');
    expect(() => parseConfig({ MQTT_URL: 'http://broker.lan:1883' })).toThrow(/Invalid MQTT_URL=.*expected an mqtt:\/\/, mqtts:\/\/, ws:\/\/ or wss:\/\/ URL or nothing/);
  });

  it('with no broker configured, says to set MQTT_URL', async () => {
    const integrations = new IntegrationRegistry();
    const connection = new MqttConnection({ url: '', username: '', password: '', integrations, logger: pino({ level: 'silent' }) });
    connection.start();
    expect(integrations.get('mqtt')).toMatchObject({ status: 'not_configured', message: expect.stringContaining('Set MQTT_URL') });
    for (const tool of [createMqttTool(connection), createMqttTool(undefined)] as Tool[]) {
      for (const action of ['publish', 'read']) {
        const result = await runTool(tool, { action, topic: 'zigbee2mqtt/kitchen/plug' });
        expect(result.success).toBe(false);
        expect(result.output).toMatch(/Set MQTT_URL/);
      }
    }
  });
});

describe('mqtt tool waits', () => {
  /** A broker that answers every read at once as if its wait were over, keeping the wait it was asked for. */
  function recordingBroker() {
    const waits: number[] = [];
    const broker: MqttBroker = {
      configured: true,
      unavailableMessage: () => '',
      publish: async () => undefined,
      read: async (_filter, options) => {
        waits.push(options.waitMs);
        return { messages: [], end: 'waited' };
      },
    };
    return { broker, waits };
  }

  it('waits 2 s by default and 10 s at most', async () => {
    const { broker, waits } = recordingBroker();
    const tool = createMqttTool(broker) as Tool;
    const byDefault = await runTool(tool, { action: 'read', topic: 'house/quiet' });
    expect(byDefault.output).toMatch(/within 2000 ms, and none retained/);
    const longest = await runTool(tool, { action: 'read', topic: 'house/quiet', wait_ms: 60_000 });
    expect(longest.output).toMatch(/within 10000 ms, the most a read waits, and none retained/);
    expect(waits).toEqual([2_000, 10_000]);
  });
});

describe('mqtt connection in the app', () => {
  let hearth: Hearth;

  /**
   * Waits on the mqtt integration's statuses in the order they came. The first wait also takes
   * the current one from GET /integrations (it may have come before the socket opened), and
   * then passes over what the socket had received: those events are older than that answer.
   */
  async function integrationsSocket(server: Hearth) {
    const events = await EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
    cleanups.push(() => events.close());
    let first = true;
    return async (predicate: (status: IntegrationStatus) => boolean): Promise<IntegrationStatus> => {
      if (first) {
        first = false;
        const current = (await server.request('GET', '/integrations')).body.integrations.find((status: IntegrationStatus) => status.name === 'mqtt');
        if (current && predicate(current)) {
          events.skipReceived();
          return current;
        }
      }
      return (await events.nextMatching(
        (event) => (event as { type: string }).type === 'integration_status' && (event as unknown as IntegrationStatus).name === 'mqtt' && predicate(event as unknown as IntegrationStatus),
        'mqtt integration_status',
      )) as unknown as IntegrationStatus;
    };
  }

  const mqttTool = (server: Hearth) => server.deps.tools.get('mqtt')!.tool as Tool;

  /** A real Mosquitto and a Hearth connected to it; `status` waits for the mqtt integration's next matching status. */
  async function hearthWithBroker() {
    const broker = await startMosquitto();
    cleanups.push(() => broker.close());
    hearth = await startHearth({ env: { MQTT_URL: broker.url } });
    cleanups.push(() => hearth.close());
    const status = await integrationsSocket(hearth);
    await status((current) => current.status === 'connected');
    return { broker, status };
  }

  it('a wrong password is reported as failed in GET /integrations and by the tool, and never shown', async () => {
    const broker = await startMosquitto({ login: { username: 'hearth', password: 'right-password' } });
    cleanups.push(() => broker.close());
    hearth = await startHearth({ env: { MQTT_URL: broker.url, MQTT_USERNAME: 'hearth', MQTT_PASSWORD: 'wrong-secret-password' } });
    cleanups.push(() => hearth.close());
    const status = await integrationsSocket(hearth);
    const failed = await status((current) => current.status === 'failed');
    expect(failed).toMatchObject({ message: `The MQTT broker at ${broker.url} refused the login (not authorized): check MQTT_USERNAME and MQTT_PASSWORD.` });
    const listed = await hearth.request('GET', '/integrations');
    expect(listed.body.integrations).toContainEqual({ name: 'mqtt', status: 'failed', message: failed.message, details: { broker: broker.url } });

    const published = await runTool(mqttTool(hearth), { action: 'publish', topic: 'hall/light/set', payload: 'ON' });
    expect(published).toEqual({ success: false, output: failed.message });
    const read = await runTool(mqttTool(hearth), { action: 'read', topic: 'hall/#' });
    expect(read).toEqual({ success: false, output: failed.message });
    expect(JSON.stringify([listed.body, published, read])).not.toContain('wrong-secret-password');
  });

  it('logs name the broker without the password, even one written into MQTT_URL', async () => {
    const broker = await startMosquitto({ login: { username: 'hearth', password: 'right-password' } });
    cleanups.push(() => broker.close());
    const logLines: string[] = [];
    const url = `mqtt://hearth:wrong-secret-password@127.0.0.1:${broker.port}`;
    const { status, tool } = await connect(url, { username: 'hearth', password: 'another-secret' }, logLines);
    expect(status).toMatchObject({ status: 'failed', details: { broker: broker.url } });
    const result = await runTool(tool, { action: 'read', topic: '#' });
    expect(result.output).toContain(broker.url);
    expect(logLines.join('')).toContain('refused the login');
    expect(JSON.stringify([logLines, status, result])).not.toMatch(/wrong-secret-password|another-secret/);
  });

  it('survives the broker going away and coming back: status events, then the next call works', async () => {
    const { broker, status } = await hearthWithBroker();

    await broker.stop();
    expect(await status((current) => current.status === 'connecting')).toMatchObject({ message: `Lost the connection to the MQTT broker at ${broker.url}; reconnecting.` });
    const failed = await status((current) => current.status === 'failed');
    expect(failed.message).toMatch(/^Cannot reach the MQTT broker at .* \(connection refused\): check that it runs/);
    const whileAway = await runTool(mqttTool(hearth), { action: 'publish', topic: 'hall/light/set', payload: 'ON' });
    expect(whileAway).toEqual({ success: false, output: failed.message });

    await broker.start();
    await status((current) => current.status === 'connected');
    const house = await observer(broker.url, 'hall/#');
    const published = await runTool(mqttTool(hearth), { action: 'publish', topic: 'hall/light/set', payload: 'ON', qos: 1 });
    expect(published).toMatchObject({ success: true });
    await new Promise<void>((resolve) => (house.received.length > 0 ? resolve() : house.client.once('message', () => resolve())));
    expect(house.received).toEqual([{ topic: 'hall/light/set', text: 'ON' }]);
  }, 30_000);

  it('with no broker configured, a publish says how to configure one without asking for approval first', async () => {
    hearth = await startHearth();
    cleanups.push(() => hearth.close());
    hearth.llm.script({ toolCalls: [{ name: 'mqtt', arguments: { action: 'publish', topic: 'zigbee2mqtt/garage_heater/set', payload: 'ON' } }] }, { content: 'MQTT is not set up.' });
    const socket = await hearth.connect(await hearth.createSession('smart_home'));
    cleanups.push(() => socket.close());
    socket.send({ type: 'message', content: 'Turn the garage heater on' });
    const first = await socket.nextMatching((event) => event.type === 'approval_required' || event.type === 'tool_call', 'approval_required or tool_call');
    expect(first).toMatchObject({ type: 'tool_call', tool: 'mqtt', success: false });
    expect((first as { result: string }).result).toMatch(/^No MQTT broker is configured\. Set MQTT_URL/);
    expect((await socket.next('stream_end')).content).toBe('MQTT is not set up.');
    expect(hearth.deps.approvals.pending()).toEqual([]);
  });

  it('a smart_home turn asks before a publish: denied publishes nothing, allowed publishes', async () => {
    const { broker } = await hearthWithBroker();
    const house = await observer(broker.url, 'zigbee2mqtt/#');
    const publish = (payload: string) => ({ name: 'mqtt', arguments: { action: 'publish', topic: 'zigbee2mqtt/garage_heater/set', payload } });
    hearth.llm.script({ toolCalls: [publish('{"state":"ON"}')] }, { content: 'I left the heater off.' }, { toolCalls: [publish('{"state":"OFF"}')] }, { content: 'Turned it off.' });
    const sessionId = await hearth.createSession('smart_home');
    const socket = await hearth.connect(sessionId);
    cleanups.push(() => socket.close());

    socket.send({ type: 'message', content: 'Turn the garage heater on' });
    const asked = await socket.next('approval_required');
    expect(asked).toMatchObject({ tool: 'mqtt', subject: 'publish zigbee2mqtt/garage_heater/set', reason: 'rule mqtt(publish *)' });
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'deny' });
    const denied = await socket.next('tool_call');
    expect(denied.success).toBe(false);
    expect(denied.result).toMatch(/denied this call \(mqtt: publish zigbee2mqtt\/garage_heater\/set\); it did not run/);
    expect((await socket.next('stream_end')).content).toBe('I left the heater off.');

    socket.send({ type: 'message', content: 'Then turn it off' });
    const askedAgain = await socket.next('approval_required');
    socket.send({ type: 'approve', call_id: askedAgain.call_id, decision: 'allow' });
    const allowed = await socket.next('tool_call');
    expect(allowed).toMatchObject({ success: true, result: 'Published 15 bytes to zigbee2mqtt/garage_heater/set (qos 0, not retained).' });
    expect((await socket.next('stream_end')).content).toBe('Turned it off.');
    // Both calls went out on one connection in order: had the denied one run, the house would have seen it first.
    await new Promise<void>((resolve) => (house.received.length > 0 ? resolve() : house.client.once('message', () => resolve())));
    expect(house.received).toEqual([{ topic: 'zigbee2mqtt/garage_heater/set', text: '{"state":"OFF"}' }]);
  });
});
