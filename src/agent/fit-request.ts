import type { ChatMessage, ToolCall, ToolDefinition } from '../llm/types.ts';
import { turnStarts } from './context-turns.ts';
import { characterCount, charactersPerToken, messageCharacters, toolCharacters } from './token-estimate.ts';

/** Share of the window left free for the answer. */
export const answerReserve = 0.15;

/** No shortened message or argument keeps less than this. */
const minimumKeptCharacters = 200;

export interface FittedRequest {
  messages: ChatMessage[];
  /** The request's estimated size as given, before anything was cut. */
  estimatedTokens: number;
  /** The estimated size of what is to be sent. */
  fittedTokens: number;
  cut: boolean;
}

/** The tokens a request may take so the answer still has room. */
export function promptBudget(contextWindow: number): number {
  return Math.floor(contextWindow * (1 - answerReserve));
}

/**
 * Cuts a request that would not fit the context window down until it does, in this order:
 * drops the reasoning of earlier rounds, shortens the largest message contents (a huge tool
 * result first), then long tool-call arguments, and last leaves out the oldest whole turns.
 * System messages are never touched. Works on a copy: the stored messages stay as they are.
 */
export function fitRequest(messages: ChatMessage[], tools: readonly ToolDefinition[], contextWindow: number): FittedRequest {
  const toolSize = toolCharacters(tools);
  const total = toolSize + messageCharacters(messages);
  const estimatedTokens = Math.ceil(total / charactersPerToken);
  let excess = total - promptBudget(contextWindow) * charactersPerToken;
  if (excess <= 0) return { messages, estimatedTokens, fittedTokens: estimatedTokens, cut: false };

  let fitted = messages.slice();
  excess = dropThinking(fitted, excess);
  if (excess > 0) excess = shortenContents(fitted, excess);
  if (excess > 0) excess = shortenArguments(fitted, excess);
  if (excess > 0) fitted = leaveOutOldTurns(fitted, excess);
  const fittedTokens = Math.ceil((toolSize + messageCharacters(fitted)) / charactersPerToken);
  return { messages: fitted, estimatedTokens, fittedTokens, cut: true };
}

function dropThinking(messages: ChatMessage[], excess: number): number {
  for (let index = 0; index < messages.length && excess > 0; index++) {
    const message = messages[index]!;
    if (message.role === 'system' || !message.thinking) continue;
    const { thinking, ...rest } = message;
    messages[index] = rest;
    excess -= thinking.length;
  }
  return excess;
}

/** Largest first, the older of two equal ones first; each only as far as still needed. */
function shortenContents(messages: ChatMessage[], excess: number): number {
  const candidates = messages
    .map((message, index) => ({ index, length: message.content.length, system: message.role === 'system' }))
    .filter((candidate) => !candidate.system && candidate.length > minimumKeptCharacters)
    .sort((left, right) => right.length - left.length || left.index - right.index);
  for (const { index } of candidates) {
    if (excess <= 0) break;
    const message = messages[index]!;
    const content = shorten(message.content, excess);
    if (content === undefined) continue;
    messages[index] = { ...message, content };
    excess -= message.content.length - content.length;
  }
  return excess;
}

function shortenArguments(messages: ChatMessage[], excess: number): number {
  for (let index = 0; index < messages.length && excess > 0; index++) {
    const message = messages[index]!;
    if (!message.tool_calls?.length) continue;
    const calls: ToolCall[] = message.tool_calls.map((call) => {
      const argumentsCopy: Record<string, unknown> = { ...call.arguments };
      for (const [name, value] of Object.entries(argumentsCopy)) {
        if (excess <= 0 || typeof value !== 'string') continue;
        const shortened = shorten(value, excess);
        if (shortened === undefined) continue;
        argumentsCopy[name] = shortened;
        excess -= JSON.stringify(value).length - JSON.stringify(shortened).length;
      }
      return { ...call, arguments: argumentsCopy };
    });
    messages[index] = { ...message, tool_calls: calls };
  }
  return excess;
}

/**
 * Keeps the head and the tail (where errors and results tend to be) and says what was cut;
 * undefined when cutting would not make the text shorter.
 */
function shorten(text: string, excess: number): string | undefined {
  if (text.length <= minimumKeptCharacters) return undefined;
  // The note itself takes room, so aim a little past the excess.
  const kept = Math.max(minimumKeptCharacters, text.length - excess - 80);
  const head = Math.ceil((kept * 2) / 3);
  const tail = kept - head;
  const omitted = text.length - kept;
  const shortened = `${text.slice(0, head)}\n[… truncated ${omitted} characters to fit the context window]\n${tail > 0 ? text.slice(-tail) : ''}`;
  return shortened.length < text.length ? shortened : undefined;
}

/**
 * The last resort: leaves whole turns out, oldest first, keeping the system messages, a
 * leading summary and the last turn, and says so where they were.
 */
function leaveOutOldTurns(messages: ChatMessage[], excess: number): ChatMessage[] {
  const leading = messages.findIndex((message) => message.role !== 'system');
  if (leading < 0) return messages;
  const starts = turnStarts(messages.slice(leading)).map((start) => start + leading);
  if (starts.length < 2) return messages;
  const from = starts[0]!;
  let to = from;
  let removed = 0;
  for (const start of starts.slice(1)) {
    for (let index = to; index < start; index++) removed += characterCount(messages[index]!);
    to = start;
    if (removed >= excess) break;
  }
  const note: ChatMessage = { role: 'user', content: `[${to - from} earlier messages were left out of this request to fit the context window.]` };
  return [...messages.slice(0, from), note, ...messages.slice(to)];
}
