import { Ajv, type ValidateFunction } from 'ajv';
import type { JsonSchema, LlmBackend, LlmError } from '../llm/types.ts';
import type { Message } from '../store/message.ts';
import { factLimits, factName, type FactInput, type MemoryFact, type PositionedMessage } from '../store/memory-repository.ts';
import { clip } from './clip.ts';

/** What the model must answer; strict enough for OpenAI's `strict` json_schema mode. */
export const factsSchema: JsonSchema = {
  type: 'object',
  properties: {
    facts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          category: { type: 'string' },
          key: { type: 'string' },
          value: { type: 'string' },
        },
        required: ['category', 'key', 'value'],
        additionalProperties: false,
      },
    },
  },
  required: ['facts'],
  additionalProperties: false,
};

let replyValidator: ValidateFunction<{ facts: FactInput[] }> | undefined;
/** Compiled for the first extraction, not at start. */
const validateReply = () => (replyValidator ??= new Ajv({ allErrors: false }).compile<{ facts: FactInput[] }>(factsSchema));

const instructions = `You keep the long-term memory of a personal assistant about the one person who uses it.
Read the conversation and extract durable facts about that person worth knowing in future conversations:
preferences, people in their life, places, projects, and their environment (hosts, IP addresses, paths, devices, services).
Facts the assistant found with tools count when they describe the person's own setup.
Leave out chit-chat, one-off requests, things only true during this conversation, and secrets (passwords, keys, tokens).

Each fact has a category (preferences, people, places, projects, environment, personal, or another short word),
a key (a short snake_case name such as home_city or nas_address) and a value (a short phrase keeping exact names, paths and numbers).
When a known fact has changed, repeat its category and key with the new value.
Answer with JSON only: {"facts":[{"category":"…","key":"…","value":"…"}]}, or {"facts":[]} when there is nothing new to remember.`;

const messageLimit = 4_000;
const toolArgumentsLimit = 300;
const toolResultLimit = 500;
const extractionTemperature = 0.1;

/** One message as a transcript line; long tool results and arguments are cut, images only mentioned. */
function transcriptLine(message: Message): string {
  switch (message.role) {
    case 'user':
      return `User: ${clip(message.content, messageLimit)}${message.images?.length ? ` [${message.images.length} image(s)]` : ''}`;
    case 'assistant': {
      const calls = (message.tool_calls ?? []).map(
        (call) => `Assistant called ${call.name}(${clip(JSON.stringify(call.arguments), toolArgumentsLimit)})`,
      );
      return [...(message.content.trim() ? [`Assistant: ${clip(message.content, messageLimit)}`] : []), ...calls].join('\n');
    }
    case 'tool':
      return `Result of ${message.name ?? 'tool'}: ${clip(message.content, toolResultLimit)}`;
    case 'system':
      return '';
  }
}

export interface TranscriptBatch {
  transcript: string;
  /** The display position of the batch's last message. */
  throughPosition: number;
}

/** Splits new messages into transcripts of at most about `maximumCharacters` each, in order. */
export function transcriptBatches(messages: readonly PositionedMessage[], maximumCharacters: number): TranscriptBatch[] {
  const batches: TranscriptBatch[] = [];
  let lines: string[] = [];
  let length = 0;
  let throughPosition = 0;
  for (const { position, message } of messages) {
    const line = transcriptLine(message);
    if (lines.length > 0 && length + line.length > maximumCharacters) {
      batches.push({ transcript: lines.join('\n\n'), throughPosition });
      lines = [];
      length = 0;
    }
    if (line !== '') {
      lines.push(line);
      length += line.length + 2;
    }
    throughPosition = position;
  }
  if (lines.length > 0 || throughPosition > 0) batches.push({ transcript: lines.join('\n\n'), throughPosition });
  return batches;
}

export type ParsedFacts = { ok: true; facts: FactInput[] } | { ok: false; message: string };

/** Reads the model's reply: JSON (a code fence around it is tolerated) matching `factsSchema`. */
export function parseFactsReply(text: string): ParsedFacts {
  const json = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1');
  let reply: unknown;
  try {
    reply = JSON.parse(json);
  } catch {
    return { ok: false, message: `the reply is not JSON: ${clip(text, 200)}` };
  }
  const validate = validateReply();
  if (!validate(reply)) {
    const [error] = validate.errors ?? [];
    return { ok: false, message: `the reply does not match the facts schema (${error?.instancePath || '/'} ${error?.message ?? ''}): ${clip(text, 200)}` };
  }
  const facts = new Map<string, FactInput>();
  for (const fact of reply.facts) {
    const category = factName(fact.category).slice(0, factLimits.category);
    const key = factName(fact.key).slice(0, factLimits.key);
    const value = fact.value.trim().slice(0, factLimits.value);
    if (category !== '' && key !== '' && value !== '') facts.set(`${category}\u0000${key}`, { category, key, value });
  }
  return { ok: true, facts: [...facts.values()] };
}

export interface ExtractionInput {
  backend: LlmBackend;
  model: string;
  transcript: string;
  /** Facts already stored, so changed ones keep their category and key. */
  knownFacts: readonly MemoryFact[];
  contextWindow: number;
  signal: AbortSignal;
}

export type ExtractionResult =
  | { ok: true; facts: FactInput[] }
  | { ok: false; reason: 'llm'; error: LlmError }
  | { ok: false; reason: 'malformed'; message: string };

/** Asks the model for the durable facts in one transcript with a structured-output request. */
export async function extractFacts(input: ExtractionInput): Promise<ExtractionResult> {
  const known = input.knownFacts.map((fact) => `- ${fact.category} / ${fact.key}: ${clip(fact.value, 200)}`).join('\n');
  const result = await input.backend.complete({
    model: input.model,
    messages: [
      { role: 'system', content: instructions },
      { role: 'user', content: `Known facts:\n${known || '(none yet)'}\n\nConversation:\n\n${input.transcript}` },
    ],
    responseSchema: factsSchema,
    temperature: extractionTemperature,
    think: false,
    contextWindow: input.contextWindow,
    signal: input.signal,
  });
  if (!result.ok) return { ok: false, reason: 'llm', error: result.error };
  const parsed = parseFactsReply(result.completion.content);
  return parsed.ok ? parsed : { ok: false, reason: 'malformed', message: parsed.message };
}
