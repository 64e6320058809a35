import {
  callNewToolStep,
  demoToolName,
  demoWords,
  isPlanningRequest,
  longStep,
  newToolAnswerStep,
  planAnswerStep,
  planningStep,
  writeToolStep,
} from './fake-llm-demos.ts';
import type { RecordedRequest, ScriptStep, ScriptedLlm, ServerOptions } from './scripted-llm.ts';
import { parseConfig } from '../../src/config.ts';
import { startScriptedOllama } from './scripted-ollama.ts';
import { startScriptedOpenAI } from './scripted-openai.ts';

type Schema = Record<string, any>;

interface OfferedTool {
  name: string;
  parameters: Schema;
}

const toolWords = /\b(tools?|todos?|notes?)\b/i;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
}

function offeredTools(body: any): OfferedTool[] {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  return tools
    .map((tool) => tool?.function ?? tool)
    .filter((tool) => typeof tool?.name === 'string')
    .map((tool) => ({ name: tool.name, parameters: tool.parameters ?? {} }));
}

function requestedSchema(body: any): Schema | undefined {
  if (body?.format && typeof body.format === 'object') return body.format;
  if (body?.format === 'json') return { type: 'object' };
  const format = body?.response_format;
  if (format?.type === 'json_schema') return format.json_schema?.schema ?? { type: 'object' };
  if (format?.type === 'json_object') return { type: 'object' };
  return undefined;
}

/** A small value that satisfies the common parts of a JSON schema, using `text` for strings. */
function sampleOf(schema: Schema | undefined, text: string, name = ''): unknown {
  if (!schema || typeof schema !== 'object') return text;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) return sampleOf(variants[0], text, name);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, sampleOf(value, text, key)]));
    }
    case 'array':
      return [sampleOf(schema.items, text, name)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return name === 'status' ? 'pending' : text;
  }
}

function todoItems(tool: OfferedTool, text: string): unknown[] {
  const pieces = text
    .replace(/^[^:\n]*\b(todo|note|tool)s?\b[^:\n]*:/i, '')
    .split(/[,;\n]| and /)
    .map((piece) => piece.trim())
    .filter(Boolean)
    .slice(0, 5);
  const itemSchema: Schema | undefined = tool.parameters.properties?.items?.items;
  return (pieces.length > 0 ? pieces : [text]).map((piece) =>
    itemSchema ? sampleOf(itemSchema, piece) : { text: piece, status: 'pending' },
  );
}

/** A command in backticks or quotes after "run" ("run `uptime`", 'run "df -h"'), for the terminal. */
function quotedCommand(text: string): string | undefined {
  const found = /\b(?:run|execute)\b[^`"'\n]*(?:`([^`]+)`|"([^"]+)"|'([^']+)')/i.exec(text);
  return (found?.[1] ?? found?.[2] ?? found?.[3])?.trim() || undefined;
}

/** "every day at 9", "every weekday at 7:30 pm": a daily (or weekday) cron, and what is left of the message as the prompt. */
function dailySchedule(text: string): { name: string; prompt: string; cron: string } | undefined {
  const found = /\bevery\s+(day|weekday)\s+at\s+(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm)?/i.exec(text);
  if (!found) return undefined;
  let hour = Number(found[2]);
  const minute = Number(found[3] ?? 0);
  if (found[4]?.toLowerCase() === 'pm' && hour < 12) hour += 12;
  if (found[4]?.toLowerCase() === 'am' && hour === 12) hour = 0;
  if (hour > 23 || minute > 59) return undefined;
  const rest = (text.slice(0, found.index) + text.slice(found.index + found[0].length))
    .replace(/\s+/g, ' ')
    .replace(/^\s*(please\s+)?remind me\s*/i, '')
    .replace(/^\s*to\s+/i, '')
    .replace(/[.!\s]+$/, '')
    .trim();
  const task = rest || 'check in';
  return { name: task, prompt: `Remind me to ${task}.`, cron: `${minute} ${hour} * * ${found[1]!.toLowerCase() === 'weekday' ? '1-5' : '*'}` };
}

/** "add a todo to buy milk", "add todo: call mum": the item, without the asking words. */
function todoToAdd(text: string): string | undefined {
  const found = /\badd\s+(?:an?\s+)?(?:item\s+)?(?:to\s+(?:my|the)\s+)?todo(?:\s+list)?\b\s*(?::|to\b)?\s*(.*)$/is.exec(text);
  const item = found?.[1]?.replace(/[.!\s]+$/, '').trim();
  return item || undefined;
}

/** A call taken from the message's own words, for the three everyday asks a newcomer tries first. */
function everydayToolCall(tools: OfferedTool[], text: string): ScriptStep['toolCalls'] {
  const offers = (name: string): boolean => tools.some((tool) => tool.name === name);
  const command = quotedCommand(text);
  if (command && offers('terminal') && !offers(command)) return [{ name: 'terminal', arguments: { command } }];
  const schedule = dailySchedule(text);
  if (schedule && offers('schedule')) return [{ name: 'schedule', arguments: { action: 'create', ...schedule } }];
  const item = todoToAdd(text);
  if (item && offers('todo')) return [{ name: 'todo', arguments: { action: 'set', items: [item] } }];
  return undefined;
}

function chooseToolCall(tools: OfferedTool[], text: string): ScriptStep['toolCalls'] {
  // A tool named in backticks ("use the `shout` tool") is the one called, e.g. one just dropped into user-tools/.
  const named = tools.find((tool) => text.includes(`\`${tool.name}\``));
  if (named) return [{ name: named.name, arguments: sampleOf({ type: 'object', ...named.parameters }, text) as Record<string, unknown> }];
  const scratchpad = tools.find((tool) => tool.name === 'scratchpad');
  if (scratchpad) return [{ name: 'scratchpad', arguments: { action: 'write', section: 'notes', content: text } }];
  const todo = tools.find((tool) => tool.name === 'todo');
  if (todo) return [{ name: 'todo', arguments: { action: 'set', items: todoItems(todo, text) } }];
  const first = tools[0];
  if (!first) return [];
  const argumentsValue = sampleOf({ type: 'object', ...first.parameters }, text);
  return [{ name: first.name, arguments: argumentsValue as Record<string, unknown> }];
}

function lastIndexWhere<T>(items: T[], test: (item: T) => boolean): number {
  for (let index = items.length - 1; index >= 0; index--) if (test(items[index] as T)) return index;
  return -1;
}

function calledToolName(messages: any[]): string {
  const caller = messages[lastIndexWhere(messages, (message) => Array.isArray(message?.tool_calls))];
  return caller?.tool_calls?.[0]?.function?.name ?? 'tool';
}

function excerpt(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

function commentOn(text: string): string {
  if (text.trim() === '') return 'You sent an empty message, which is fine by me.';
  if (text.trim().endsWith('?')) return 'That is a question; a real model would try to answer it.';
  if (toolWords.test(text)) return 'You mentioned tools, todos or notes; offer me tools and I will call one.';
  return 'Start a message with **plan**, **long** or **make a tool**, or mention a **todo** or a **note**, to see what Hearth does.';
}

function answerStep(text: string, thinkingWanted: boolean): ScriptStep {
  const words = text.split(/\s+/).filter(Boolean).length;
  const content = [
    '**Fake model here.** You said:',
    '',
    `> ${excerpt(text, 400).replace(/\n/g, '\n> ')}`,
    '',
    `- It has ${words} word${words === 1 ? '' : 's'} and ${text.length} characters.`,
    `- ${commentOn(text)}`,
    '',
    '_This reply comes from `npm run dev:fake-llm`, not a real model._',
  ].join('\n');
  const thinking = `The user wrote ${words} words. I will echo them back in Markdown and add a short comment.`;
  return { ...(thinkingWanted ? { thinking } : {}), content, delayMs: 15 };
}

/** The fake model's reply to one request: the demo words first, then the echo and the tool words. */
export function fakeLlmStep(request: RecordedRequest): ScriptStep {
  const body = request.body ?? {};
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const lastUser = lastIndexWhere(messages, (message) => message?.role === 'user');
  const userText = lastUser >= 0 ? textOf(messages[lastUser].content) : '';
  const thinkingWanted = body.think !== false;

  const schema = requestedSchema(body);
  if (schema) return { content: JSON.stringify(sampleOf(schema, excerpt(userText, 60) || 'fake')) };
  if (isPlanningRequest(messages)) return planningStep(userText);

  const tools = offeredTools(body);
  const offers = (name: string): boolean => tools.some((tool) => tool.name === name);
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    const name = calledToolName(messages);
    const result = textOf(last.content);
    if (demoWords.makeTool.test(userText) && name === 'write_tool' && result.startsWith('Installed') && offers(demoToolName)) {
      return callNewToolStep(thinkingWanted);
    }
    if (demoWords.makeTool.test(userText) && name === demoToolName) return newToolAnswerStep(result, thinkingWanted);
    return {
      ...(thinkingWanted ? { thinking: `The ${name} tool answered. Time to report back.` } : {}),
      content: [
        `I called the \`${name}\` tool and it answered:`,
        '',
        '```',
        excerpt(result, 500),
        '```',
        '',
        'That is all a fake model can do with it. Start a real model for real work.',
      ].join('\n'),
      delayMs: 15,
    };
  }

  const calledSinceUser = messages.slice(lastUser + 1).some((message) => Array.isArray(message?.tool_calls));
  if (demoWords.makeTool.test(userText) && offers('write_tool') && !calledSinceUser) return writeToolStep(thinkingWanted);
  if (demoWords.long.test(userText)) return longStep(thinkingWanted);
  const everyday = calledSinceUser ? undefined : everydayToolCall(tools, userText);
  if (everyday) {
    return { ...(thinkingWanted ? { thinking: `I will call ${everyday[0]!.name} with what the message says.` } : {}), toolCalls: everyday, delayMs: 15 };
  }
  if (tools.length > 0 && toolWords.test(userText) && !calledSinceUser) {
    return {
      ...(thinkingWanted ? { thinking: 'The user mentioned tools, todos or notes. I will call a tool.' } : {}),
      toolCalls: chooseToolCall(tools, userText),
      delayMs: 15,
    };
  }
  if (demoWords.plan.test(userText)) return planAnswerStep(thinkingWanted);
  return answerStep(userText, thinkingWanted);
}

export interface FakeLlmOptions extends ServerOptions {
  /** The OpenAI-compatible flavour instead of Ollama's. */
  openai?: boolean;
}

/** The fake LLM of `npm run dev:fake-llm`: a scripted server that answers every request with `fakeLlmStep`. */
export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<ScriptedLlm> {
  const { openai = false, ...serverOptions } = options;
  // Ollama's flavour lists Hearth's default model, so `npm start` without OLLAMA_DEFAULT_MODEL finds it on first load.
  const models = [parseConfig({}).OLLAMA_DEFAULT_MODEL];
  const server = openai ? await startScriptedOpenAI(serverOptions) : await startScriptedOllama({ ...serverOptions, models });
  server.respondWith(fakeLlmStep);
  return server;
}
