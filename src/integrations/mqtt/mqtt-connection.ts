import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { MqttClient } from 'mqtt';
import type { Logger } from '../../logger.ts';
import type { IntegrationRegistry, IntegrationState } from '../integration-registry.ts';
import { brokerAddress, describeConnectionError, describeSilentClose } from './connection-failures.ts';
import { topicMatches } from './topic-match.ts';

export const mqttIntegrationName = 'mqtt';

export const notConfiguredMessage =
  'No MQTT broker is configured. Set MQTT_URL (e.g. mqtt://192.168.1.10:1883), and MQTT_USERNAME and MQTT_PASSWORD if the broker asks for a login, then restart Hearth.';

export interface MqttConnectionOptions {
  url: string;
  username: string;
  password: string;
  integrations: IntegrationRegistry;
  logger: Logger;
  connectTimeoutMs?: number;
}

export interface MqttMessage {
  topic: string;
  payload: Buffer;
  /** Sent because it was retained on the broker, not published while the read was listening. */
  retained: boolean;
}

export type ReadEnd = 'waited' | 'limit' | 'stopped' | 'disconnected';

export type ReadResult = { messages: MqttMessage[]; end: ReadEnd } | { failure: string };

export interface ReadOptions {
  waitMs: number;
  maxMessages: number;
  signal: AbortSignal;
}

export interface PublishOptions {
  qos: 0 | 1 | 2;
  retain: boolean;
  signal: AbortSignal;
}

interface MqttConnectionEvents {
  /** A read's subscription was acknowledged: retained messages follow, then live ones. */
  listening: [filter: string];
  /** A message arrived for a read under way. */
  message: [MqttMessage];
}

interface Reader {
  filter: string;
  accept(message: MqttMessage): void;
}

const firstRetryMs = 500;
const longestRetryMs = 30_000;
const subscriptionRefused = 128;

type MqttLibrary = typeof import('mqtt').default;
let loadingMqtt: Promise<MqttLibrary> | undefined;

/**
 * Hearth's one connection to the MQTT broker of MQTT_URL: it reconnects with backoff, reports
 * its status to the integration registry as `mqtt`, and lends itself to the `mqtt` tool's
 * publishes and reads. The password stays in the client's options; messages and logs name the
 * broker by protocol, host and port only.
 */
export class MqttConnection extends EventEmitter<MqttConnectionEvents> {
  private client: MqttClient | undefined;
  private starting = false;
  private readonly address: string;
  private readonly connectTimeoutMs: number;
  private readonly readers = new Set<Reader>();
  private readonly subscribers = new Map<string, number>();
  private retryTimer: NodeJS.Timeout | undefined;
  private failedAttempts = 0;
  private closed = false;
  private attempt = { startedAt: 0, connected: false, failed: false };

  constructor(private readonly options: MqttConnectionOptions) {
    super();
    this.address = brokerAddress(options.url);
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  }

  get configured(): boolean {
    return this.options.url !== '';
  }

  get connected(): boolean {
    return this.client?.connected === true;
  }

  /** The topic filters subscribed for reads under way. */
  get subscriptions(): string[] {
    return [...this.subscribers.keys()];
  }

  /** Connects in the background (reporting `connecting` at once); resolves once the client is created. */
  async start(): Promise<void> {
    if (!this.configured) {
      this.report('not_configured', notConfiguredMessage);
      return;
    }
    if (this.client || this.starting) return;
    this.starting = true;
    this.report('connecting');
    let mqtt: MqttLibrary;
    try {
      // Loaded on the first connection only: a Hearth without MQTT_URL never parses the client.
      mqtt = await (loadingMqtt ??= import('mqtt').then((module) => module.default));
    } catch (error) {
      this.fail(`The MQTT client could not be loaded (${(error as Error).message}).`);
      return;
    } finally {
      this.starting = false;
    }
    if (this.closed || this.client) return;
    this.attempt = { startedAt: Date.now(), connected: false, failed: false };
    const client = mqtt.connect(this.options.url, {
      ...(this.options.username !== '' && { username: this.options.username }),
      ...(this.options.password !== '' && { password: this.options.password }),
      clientId: `hearth-${randomBytes(6).toString('hex')}`,
      // Hearth schedules reconnects itself, with backoff; the client's own retry is a fixed interval.
      reconnectPeriod: 0,
      connectTimeout: this.connectTimeoutMs,
    });
    this.client = client;
    client.on('connect', () => this.onConnect());
    client.on('error', (error) => this.onError(error));
    client.on('close', () => this.onClose());
    client.on('message', (topic, payload, packet) => {
      const message = { topic, payload, retained: packet.retain };
      for (const reader of this.readers) {
        if (topicMatches(reader.filter, topic)) reader.accept(message);
      }
      this.emit('message', message);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.endAsync(true);
  }

  /** Why a publish or read cannot go to the broker now, in words the model can act on. */
  unavailableMessage(): string {
    if (!this.configured) return notConfiguredMessage;
    const status = this.options.integrations.get(mqttIntegrationName);
    return status?.message ?? `Not connected to the MQTT broker at ${this.address} yet; try again in a moment.`;
  }

  /** Publishes and waits for the broker's acknowledgement (QoS 1 and 2); answers a failure message, or undefined. */
  async publish(topic: string, payload: Buffer, options: PublishOptions): Promise<string | undefined> {
    const client = this.client;
    if (!client?.connected) return this.unavailableMessage();
    const stopped = abortPromise(options.signal);
    try {
      const outcome = await Promise.race([
        client.publishAsync(topic, payload, { qos: options.qos, retain: options.retain }).then(() => 'published' as const),
        stopped.promise,
      ]);
      return outcome === 'stopped' ? 'Stopped before the broker acknowledged the message; it may or may not have been delivered.' : undefined;
    } catch (error) {
      return `The broker at ${this.address} did not take the message (${(error as Error).message}).`;
    } finally {
      stopped.dispose();
    }
  }

  /**
   * Subscribes to `filter` and gathers the retained messages and those arriving within `waitMs`
   * (counted from the broker's acknowledgement), up to `maxMessages`; unsubscribes after.
   */
  async read(filter: string, options: ReadOptions): Promise<ReadResult> {
    const client = this.client;
    if (!client?.connected) return { failure: this.unavailableMessage() };
    const messages: MqttMessage[] = [];
    let finish: (end: ReadEnd) => void = () => {};
    const ended = new Promise<ReadEnd>((resolve) => (finish = resolve));
    const reader: Reader = {
      filter,
      accept(message) {
        if (messages.length >= options.maxMessages) return;
        messages.push(message);
        if (messages.length >= options.maxMessages) finish('limit');
      },
    };
    const stopped = abortPromise(options.signal);
    void stopped.promise.then(finish);
    const onClose = () => finish('disconnected');
    client.on('close', onClose);
    this.readers.add(reader);
    this.subscribers.set(filter, (this.subscribers.get(filter) ?? 0) + 1);
    let timer: NodeJS.Timeout | undefined;
    try {
      const subscribed = await Promise.race([client.subscribeAsync(filter, { qos: 0 }), ended]);
      if (typeof subscribed === 'string') return { messages, end: subscribed };
      if (subscribed.some((grant) => grant.qos === subscriptionRefused)) {
        return { failure: `The broker refused the subscription to "${filter}" (not authorized for it, or an invalid filter).` };
      }
      timer = setTimeout(() => finish('waited'), options.waitMs);
      this.emit('listening', filter);
      return { messages, end: await ended };
    } catch (error) {
      return { failure: `The broker at ${this.address} did not take the subscription (${(error as Error).message}).` };
    } finally {
      clearTimeout(timer);
      stopped.dispose();
      client.off('close', onClose);
      this.readers.delete(reader);
      this.release(client, filter);
    }
  }

  private release(client: MqttClient, filter: string): void {
    const remaining = (this.subscribers.get(filter) ?? 1) - 1;
    if (remaining > 0) {
      this.subscribers.set(filter, remaining);
      return;
    }
    this.subscribers.delete(filter);
    if (client.connected) {
      client.unsubscribeAsync(filter).catch((error: unknown) => {
        this.options.logger.debug({ err: error, filter }, 'MQTT unsubscribe failed');
      });
    }
  }

  private onConnect(): void {
    this.attempt.connected = true;
    this.failedAttempts = 0;
    this.options.logger.info({ broker: this.address }, 'MQTT connected');
    this.report('connected');
  }

  private onError(error: Error): void {
    this.attempt.failed = true;
    this.fail(describeConnectionError(error, this.address));
  }

  private onClose(): void {
    if (this.closed) return;
    const { connected, failed, startedAt } = this.attempt;
    if (connected) {
      this.options.logger.warn({ broker: this.address }, 'MQTT connection lost; reconnecting');
      this.report('connecting', `Lost the connection to the MQTT broker at ${this.address}; reconnecting.`);
    } else if (!failed) {
      const timedOut = Date.now() - startedAt >= this.connectTimeoutMs - 50;
      this.fail(describeSilentClose(this.address, timedOut, Math.round(this.connectTimeoutMs / 1000)));
    }
    this.scheduleReconnect(connected ? 0 : Math.min(firstRetryMs * 2 ** this.failedAttempts++, longestRetryMs));
  }

  private scheduleReconnect(delayMs: number): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      if (this.closed || !this.client) return;
      this.attempt = { startedAt: Date.now(), connected: false, failed: false };
      this.client.reconnect();
    }, delayMs);
  }

  private fail(message: string): void {
    if (this.options.integrations.get(mqttIntegrationName)?.message !== message) {
      this.options.logger.warn({ broker: this.address }, message);
    }
    this.report('failed', message);
  }

  private report(status: IntegrationState, message?: string): void {
    this.options.integrations.report({
      name: mqttIntegrationName,
      status,
      ...(message !== undefined && { message }),
      details: this.configured ? { broker: this.address } : {},
    });
  }
}

function abortPromise(signal: AbortSignal): { promise: Promise<'stopped'>; dispose(): void } {
  let listener = () => {};
  const promise = new Promise<'stopped'>((resolve) => {
    listener = () => resolve('stopped');
    if (signal.aborted) resolve('stopped');
    else signal.addEventListener('abort', listener, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', listener) };
}
