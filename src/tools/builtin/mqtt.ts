import { Type, type Static } from '@sinclair/typebox';
import type { Tool, ToolOutput } from '../tool.ts';
import { messageLine } from './mqtt/message-lines.ts';
import { publishTopicProblem, readFilterProblem } from './mqtt/topic-rules.ts';
import { toolFailure } from '../../failure.ts';

const actions = ['publish', 'read'] as const;
type Action = (typeof actions)[number];
type Qos = 0 | 1 | 2;

export const defaultWaitMs = 2_000;
export const maximumWaitMs = 10_000;
export const maximumMessages = 50;
const shortestWaitMs = 100;

const parameters = Type.Object(
  {
    action: Type.Unsafe<Action>({ type: 'string', enum: [...actions] }),
    topic: Type.String({ description: 'publish: one topic; read: a filter, + one level, # the rest' }),
    payload: Type.Optional(Type.Unsafe<unknown>({ type: ['string', 'object', 'array', 'number', 'boolean'], description: 'publish: text, or JSON' })),
    retain: Type.Optional(Type.Boolean()),
    qos: Type.Optional(Type.Unsafe<Qos>({ type: 'integer', enum: [0, 1, 2] })),
    wait_ms: Type.Optional(Type.Integer({ minimum: 0, description: `read: how long to listen (default ${defaultWaitMs}, max ${maximumWaitMs})` })),
  },
  { additionalProperties: false },
);

type MqttArguments = Static<typeof parameters>;

interface ReceivedMessage {
  topic: string;
  payload: Buffer;
  retained: boolean;
}

/** What the tool needs of the MQTT connection (src/integrations/mqtt): the app hands it in. */
export interface MqttBroker {
  readonly configured: boolean;
  unavailableMessage(): string;
  publish(topic: string, payload: Buffer, options: { qos: Qos; retain: boolean; signal: AbortSignal }): Promise<string | undefined>;
  read(
    filter: string,
    options: { waitMs: number; maxMessages: number; signal: AbortSignal },
  ): Promise<{ messages: ReceivedMessage[]; end: 'waited' | 'limit' | 'stopped' | 'disconnected' } | { failure: string }>;
}

const notConfigured = 'No MQTT broker is configured. Set MQTT_URL and restart Hearth.';

function payloadBytes(payload: unknown): Buffer {
  if (payload === undefined) return Buffer.alloc(0);
  return Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload), 'utf8');
}

function count(amount: number, noun: string): string {
  return `${amount} ${noun}${amount === 1 ? '' : 's'}`;
}

export function createMqttTool(broker: MqttBroker | undefined): Tool<MqttArguments> {
  async function publish(args: MqttArguments, signal: AbortSignal): Promise<ToolOutput> {
    const problem = publishTopicProblem(args.topic);
    if (problem) return toolFailure(problem);
    if (!broker?.configured) return toolFailure(broker?.unavailableMessage() ?? notConfigured);
    const qos = args.qos ?? 0;
    const retain = args.retain ?? false;
    const payload = payloadBytes(args.payload);
    const refused = await broker.publish(args.topic, payload, { qos, retain, signal });
    if (refused) return toolFailure(refused);
    const retainNote = retain ? (payload.length === 0 ? 'retained: clears the retained message' : 'retained') : 'not retained';
    return `Published ${count(payload.length, 'byte')} to ${args.topic} (qos ${qos}, ${retainNote}).`;
  }

  async function read(args: MqttArguments, signal: AbortSignal): Promise<ToolOutput> {
    const problem = readFilterProblem(args.topic);
    if (problem) return toolFailure(problem);
    if (!broker?.configured) return toolFailure(broker?.unavailableMessage() ?? notConfigured);
    const requestedWaitMs = args.wait_ms ?? defaultWaitMs;
    const waitMs = Math.min(Math.max(requestedWaitMs, shortestWaitMs), maximumWaitMs);
    const startedAt = Date.now();
    const result = await broker.read(args.topic, { waitMs, maxMessages: maximumMessages, signal });
    if ('failure' in result) return toolFailure(result.failure);
    const { messages, end } = result;
    const retained = messages.filter((message) => message.retained).length;
    const listened = end === 'waited' ? waitMs : Date.now() - startedAt;
    const capNote = requestedWaitMs > maximumWaitMs ? `, the most a read waits` : '';
    const lines =
      messages.length === 0
        ? [`No messages on ${args.topic} within ${listened} ms${capNote}, and none retained. Topics are case-sensitive; a wider filter such as "${args.topic.split('/')[0]}/#" shows what is there.`]
        : [`${count(messages.length, 'message')} on ${args.topic} (${retained} retained; listened ${listened} ms${capNote}):`, ...messages.map(messageLine)];
    if (end === 'limit') lines.push(`Stopped at ${maximumMessages} messages, the most one read returns: narrow the topic filter to see others.`);
    if (end === 'stopped') lines.push('Stopped before the wait was over.');
    if (end === 'disconnected') {
      lines.push('The connection to the broker dropped during the read; try again in a moment.');
      return toolFailure(lines.join('\n'));
    }
    return lines.join('\n');
  }

  return {
    name: 'mqtt',
    description: 'Publish to an MQTT topic, or read a topic filter: retained messages plus those arriving within wait_ms.',
    parameters,
    timeoutMs: maximumWaitMs + 20_000,
    subject: (args) => `${args.action} ${args.topic}`,
    outflow: (args) => (args.action === 'publish' ? { effect: 'a message published now' } : undefined),
    precheck: () => (broker?.configured ? undefined : (broker?.unavailableMessage() ?? notConfigured)),
    async execute(args, context) {
      const action: Action = args.action;
      switch (action) {
        case 'publish':
          return publish(args, context.signal);
        case 'read':
          return read(args, context.signal);
        default:
          return toolFailure(`Unknown action "${String(action satisfies never)}"; use one of: ${actions.join(', ')}.`);
      }
    },
  };
}
