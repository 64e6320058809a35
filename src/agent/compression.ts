// Context compression (docs/agent.md, "How a turn works", steps 2 and 5): the old turns of a session's `context`
// become one summary message; the display history is never touched.
import type { Config } from '../config.ts';
import type { ChatMessage, ToolDefinition } from '../llm/types.ts';
import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import type { Message, NewMessage } from '../store/message.ts';
import { listMessages, replaceContextPrefix } from '../store/messages-repository.ts';
import { updateSession } from '../store/sessions-repository.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { definitionsOf, type RoundSetup } from './agent-loop.ts';
import { isSummary, summaryLabel, turnStarts } from './context-turns.ts';
import type { AgentEvent } from '../protocol/events.ts';
import { characterCount, charactersPerToken, estimateRequestTokens, estimateTokens } from './token-estimate.ts';
import { messageOf } from '../failure.ts';

/** How much of one message the summariser reads. */
const toolArgumentCharacters = 200;
const toolResultCharacters = 400;
const messageTextCharacters = 1_500;

export interface CompressionLimits {
  /** The summariser's whole input: half the window, at most 16,000 characters. */
  inputCharacters: number;
  /** The summary: about 8% of the window, 800 to 6,000 characters. */
  summaryCharacters: number;
}

export function compressionLimits(contextWindow: number): CompressionLimits {
  const windowCharacters = contextWindow * charactersPerToken;
  return {
    inputCharacters: Math.min(16_000, Math.floor(windowCharacters * 0.5)),
    summaryCharacters: Math.min(6_000, Math.max(800, Math.floor(windowCharacters * 0.08))),
  };
}

/**
 * What the kept recent turns may take: half of what is left under the trigger once the system
 * prompt, the tool schemas (`fixedTokens`) and a summary are in, so the context can grow again.
 */
export function keptTokenBudget(config: Config, contextWindow: number, fixedTokens: number): number {
  const trigger = contextWindow * config.CONTEXT_COMPRESSION_THRESHOLD;
  const summaryTokens = compressionLimits(contextWindow).summaryCharacters / charactersPerToken;
  return Math.max(0, (trigger - fixedTokens - summaryTokens) / 2);
}

export interface CompressionPlan {
  messagesBefore: number;
  /** What the summary replaces: an earlier summary, then whole old turns. */
  replaced: Message[];
  /** The recent turns, kept verbatim. */
  kept: Message[];
}

/**
 * Keeps the last `keepRecent` turns and replaces everything before them. Recent turns that
 * alone take more than `keptTokens` are kept fewer, down to the last one, or a turn
 * holding a huge tool result would stay in the context for good. Undefined when nothing
 * but an earlier summary would be replaced.
 */
export function planCompression(messages: readonly Message[], keepRecent: number, keptTokens: number): CompressionPlan | undefined {
  const starts = turnStarts(messages);
  if (starts.length === 0) return undefined;
  let keep = Math.min(keepRecent, starts.length);
  if (keep > 1) {
    const budgetCharacters = keptTokens * charactersPerToken;
    let keptCharacters = 0;
    let index = messages.length;
    for (let turn = starts.length - 1; turn >= starts.length - keep; turn--) {
      while (index > starts[turn]!) keptCharacters += characterCount(messages[--index]!);
      if (keptCharacters > budgetCharacters) {
        keep = Math.max(1, starts.length - 1 - turn);
        break;
      }
    }
  }
  const cut = starts[starts.length - keep]!;
  const replaced = messages.slice(0, cut);
  if (!replaced.some((message) => !isSummary(message))) return undefined;
  return { messagesBefore: messages.length, replaced, kept: messages.slice(cut) };
}

/**
 * What the summariser reads: the earlier summary, then the replaced turns one line per
 * message with long text, tool arguments and results truncated. Past the cap, the start
 * (where the goal usually is) and the most recent part are kept and the middle is left out.
 */
export function summariserInput(replaced: readonly Message[], inputCharacters: number): string {
  const earlier = replaced.filter(isSummary).map((summary) => withoutLabel(summary.content));
  const previous = earlier.length > 0 ? clip(earlier.join('\n\n'), Math.floor(inputCharacters / 3)) : '';
  const conversation = replaced.filter((message) => !isSummary(message));
  const lines = boundedLines(conversation, inputCharacters - previous.length);
  return [...(previous ? [`Previous summary:\n${previous}`] : []), `Conversation since then:\n${lines}`].join('\n\n');
}

function boundedLines(messages: readonly Message[], budget: number): string {
  const head: string[] = [];
  let used = 0;
  let first = 0;
  for (; first < messages.length; first++) {
    const line = describe(messages[first]!);
    if (used + line.length + 1 > budget / 4) break;
    head.push(line);
    used += line.length + 1;
  }
  const tail: string[] = [];
  let end = messages.length;
  for (; end > first; end--) {
    const line = describe(messages[end - 1]!);
    if (used + line.length + 1 > budget) break;
    tail.push(line);
    used += line.length + 1;
  }
  const omitted = end - first;
  return [...head, ...(omitted > 0 ? [`[… ${omitted} messages left out here …]`] : []), ...tail.reverse()].join('\n');
}

function describe(message: Message): string {
  switch (message.role) {
    case 'user':
      return `User: ${clip(message.content, messageTextCharacters)}`;
    case 'assistant': {
      const lines: string[] = [];
      if (message.content !== '') lines.push(`Assistant${message.is_plan ? "'s plan" : ''}: ${clip(message.content, messageTextCharacters)}`);
      for (const call of message.tool_calls ?? []) {
        lines.push(`Assistant called ${call.name}(${clip(call.invalid_arguments ?? JSON.stringify(call.arguments), toolArgumentCharacters)})`);
      }
      if (message.stopped) lines.push('(stopped by the user)');
      return lines.length > 0 ? lines.join('\n') : 'Assistant: (no text)';
    }
    case 'tool':
      return `Result of ${message.name ?? 'a tool'}${message.success === false ? ' (failed)' : ''}: ${clip(message.content, toolResultCharacters)}`;
    case 'system':
      return `System note: ${clip(message.content, toolResultCharacters)}`;
  }
}

function clip(text: string, maxCharacters: number): string {
  return text.length <= maxCharacters ? text : `${text.slice(0, maxCharacters)}… [${text.length - maxCharacters} more characters]`;
}

function withoutLabel(content: string): string {
  return content.startsWith(summaryLabel) ? content.slice(summaryLabel.length).trimStart() : content;
}

export function summariserMessages(input: string, summaryCharacters: number): ChatMessage[] {
  const words = Math.round(summaryCharacters / 7);
  const instructions = [
    'You condense the earlier part of a conversation between a person and their AI assistant, so the assistant can carry on without it.',
    'Write short bullet points under these headings, leaving out a heading with nothing under it:',
    '## Current goal (what the person wants now)',
    '## Work state (what is done, what is left)',
    '## Key facts (names, file paths, hosts, URLs, commands, numbers and IDs, exactly as written)',
    '## Outputs (what was produced, and where)',
    '## Errors (what failed, and whether it was fixed)',
    'If a previous summary is given, merge it in: keep what still matters, drop what is finished or no longer true.',
    `At most ${words} words. Answer with the summary only.`,
  ].join('\n');
  return [
    { role: 'system', content: instructions },
    { role: 'user', content: input },
  ];
}

export interface CompressionInput {
  db: Db;
  sessionId: string;
  config: Config;
  /** The session's profile setup: the summary comes from the same backend and model. */
  setup: RoundSetup;
  tools: readonly ToolDefinition[];
  emit: (event: AgentEvent) => void;
  signal: AbortSignal;
}

export type CompressionOutcome =
  | { status: 'compressed'; messagesBefore: number; messagesAfter: number; contextTokens: number }
  | { status: 'nothing_to_compress' }
  | { status: 'failed'; message: string; aborted: boolean };

/** Compresses the session's context now; a failed summary leaves it as it was. */
export async function compressContext(input: CompressionInput): Promise<CompressionOutcome> {
  return compressMessages(await listMessages(input.db, input.sessionId, 'context'), input);
}

/** Compresses `messages`, the session's context as just read. */
export async function compressMessages(messages: readonly Message[], input: CompressionInput): Promise<CompressionOutcome> {
  const { db, sessionId, config, setup } = input;
  const { contextWindow } = setup;
  const limits = compressionLimits(contextWindow);
  const fixedTokens = estimateRequestTokens(setup.systemMessages, input.tools);
  const plan = planCompression(messages, config.CONTEXT_KEEP_RECENT, keptTokenBudget(config, contextWindow, fixedTokens));
  if (!plan) return { status: 'nothing_to_compress' };

  const result = await setup.backend.complete({
    model: setup.model,
    messages: summariserMessages(summariserInput(plan.replaced, limits.inputCharacters), limits.summaryCharacters),
    temperature: config.CONTEXT_SUMMARY_TEMPERATURE,
    think: false,
    contextWindow,
    signal: input.signal,
  });
  if (!result.ok) return { status: 'failed', message: result.error.message, aborted: result.error.code === 'aborted' };
  const text = result.completion.content.trim();
  if (text === '') return { status: 'failed', message: 'The summariser answered with nothing.', aborted: false };

  // What the replaced messages read from outside may live on in the summary: it keeps their taint (docs/security.md: Untrusted content).
  const outside = [...new Set(plan.replaced.flatMap((message) => (message.untrusted_source === undefined ? [] : [message.untrusted_source])))];
  const summary: NewMessage = {
    role: 'user',
    content: `${summaryLabel}\n\n${clip(text, limits.summaryCharacters)}`,
    is_summary: true,
    ...(outside.length > 0 && { untrusted_source: `a summary of ${outside.join(', ')}` }),
  };
  await replaceContextPrefix(db, sessionId, plan.replaced.at(-1)!.id, summary);
  // An estimate until the next call reports what the backend counted.
  const contextTokens = fixedTokens + estimateTokens([summary, ...plan.kept]);
  await updateSession(db, sessionId, { contextTokens });
  const messagesAfter = plan.kept.length + 1;
  input.emit({ type: 'context_compressed', messages_before: plan.messagesBefore, messages_after: messagesAfter });
  return { status: 'compressed', messagesBefore: plan.messagesBefore, messagesAfter, contextTokens };
}

export interface CompressionTrigger {
  sessionId: string;
  /** The turn's setup for the session (its backend, model and window). */
  setup: RoundSetup;
  /** What the context holds now, as last counted plus anything stored since (the new user message). */
  contextTokens: number;
  emit: (event: AgentEvent) => void;
  signal: AbortSignal;
}

/** When compression is due (the CONTEXT_COMPRESSION_* settings). */
export type CompressionSettings = Pick<Config, 'CONTEXT_COMPRESSION_ENABLED' | 'CONTEXT_COMPRESSION_THRESHOLD'>;

/** What compressing a stored session works with: its rows, the settings, the log, and the tools (their schemas count against the window). */
export interface CompressionSources {
  db: Db;
  config: Config;
  logger: Logger;
  tools: ToolRegistry;
}

/** docs/agent.md, "How a turn works": compression is due when `context_tokens ≥ num_ctx × threshold`, num_ctx being the backend's window. */
export function needsCompression(config: CompressionSettings, contextWindow: number, contextTokens: number): boolean {
  return config.CONTEXT_COMPRESSION_ENABLED && contextTokens >= contextWindow * config.CONTEXT_COMPRESSION_THRESHOLD;
}

/**
 * Compresses when it is due. Never throws: a failure is logged
 * and the context stays as it was, so the turn goes on unaffected.
 */
export async function compressIfNeeded(trigger: CompressionTrigger, sources: CompressionSources): Promise<CompressionOutcome | undefined> {
  const { sessionId, setup } = trigger;
  const { config, logger } = sources;
  if (!needsCompression(config, setup.contextWindow, trigger.contextTokens)) return undefined;
  try {
    const outcome = await compressContext({
      db: sources.db,
      sessionId,
      config,
      setup,
      tools: definitionsOf(setup.toolNames, sources.tools),
      emit: trigger.emit,
      signal: trigger.signal,
    });
    if (outcome.status === 'compressed') {
      logger.info({ sessionId, before: outcome.messagesBefore, after: outcome.messagesAfter, contextTokens: outcome.contextTokens }, 'context compressed');
    } else if (outcome.status === 'failed' && !outcome.aborted) {
      logger.warn({ sessionId, error: outcome.message }, 'context compression failed; the context is unchanged');
    }
    return outcome;
  } catch (error) {
    logger.error({ err: error, sessionId }, 'context compression failed; the context is unchanged');
    return { status: 'failed', message: messageOf(error), aborted: false };
  }
}
