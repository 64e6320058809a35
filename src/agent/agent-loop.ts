import type { ChatMessage, LlmBackend, LlmError, ToolCall, ToolDefinition, Usage } from '../llm/types.ts';
import type { NewMessage } from '../store/message.ts';
import { executeToolCall } from '../tools/execute-tool-call.ts';
import { outflowOf, type ToolContext } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { combineReadings, outflowReason, type OutsideReading } from '../approvals/outflow.ts';
import type { ApprovalPolicy } from '../approvals/policy.ts';
import type { JailKind } from '../jail/jail-spec.ts';
import type { Authorization, AuthorizationRequest } from './approval-gate.ts';
import type { ContextMessage } from './chat-message.ts';
import { outsideReadingOf, wrapOutsideContent } from './outside-content.ts';
import { DraftCheckpoint, type DraftCheckpointOptions } from './draft-checkpoint.ts';
import { fitRequest } from './fit-request.ts';
import { streamRound, type RoundResult } from './stream-round.ts';
import { charactersPerToken, estimateTokens } from './token-estimate.ts';

/** Where the loop reads the model's view of the conversation and appends to it. */
export interface Conversation {
  load(): Promise<ContextMessage[]>;
  append(messages: NewMessage[]): Promise<void>;
  /** Adds messages only the model sees (an image a tool loaded), not the display history. */
  appendToContext(messages: NewMessage[]): Promise<void>;
}

/** Everything one LLM call needs; resolved again before every round, so a profile switch applies at once. */
export interface RoundSetup {
  backend: LlmBackend;
  model: string;
  /** The system prompt, then what is remembered about the user; rebuilt for every call. */
  systemMessages: ChatMessage[];
  toolNames: readonly string[];
  temperature: number;
  think: boolean;
  contextWindow: number;
  maxIterations: number;
  /** Every policy governing this run's calls; the strictest verdict wins (docs/agent.md, "Approvals"). */
  approvalPolicies: readonly ApprovalPolicy[];
  /** The jail each tool's processes run in, from the profile (strict unless it says otherwise). */
  jailKinds: Readonly<Record<string, JailKind>>;
  /** The session's profile this round (a sub-agent's: its parent session's), handed to tools as ToolContext.sessionProfileId. */
  sessionProfileId: string;
  /** The profile whose rules and tools this round follows: a sub-agent's own, which may not be its session's. */
  profileId?: string;
  /** Tools the profile lets send and act after the run has read outside content (`untrusted: {allow}`). */
  untrustedAllow: readonly string[];
}

export interface LoopInput {
  conversation: Conversation;
  setup: () => Promise<{ ok: true; setup: RoundSetup } | { ok: false; error: LlmError }>;
  registry: ToolRegistry;
  toolTimeoutMs: number;
  /** An answer (with its reasoning) longer than this is cut off with a note (MAX_ANSWER_CHARS). */
  maxAnswerCharacters: number;
  /** The run's context; a sub-agent's `outside` is what its parent had read, which binds it too. */
  context: ToolContext;
  /** The approval path every call passes before it runs (approval-gate.ts), outside the model. */
  authorize: (request: AuthorizationRequest) => Promise<Authorization>;
  /** Checkpoints each streaming answer so a crash keeps it; sub-agents, held in memory, have none. */
  drafts?: Omit<DraftCheckpointOptions, 'intervalMs' | 'maxPendingCharacters'>;
}

export type LoopOutcome =
  | {
      status: 'completed';
      content: string;
      /** What the backend reported for the last call. */
      usage?: Usage;
      /** The last call's estimated size as the context holds it (before any cut to fit the window), answer included. */
      estimatedTokens: number;
      /** Whether the last request had to be cut to fit the window, so `usage` counts less than the context holds. */
      cut: boolean;
      /** The window of the backend the last call went to. */
      contextWindow: number;
    }
  | {
      status: 'stopped';
      content: string;
      /** The last call's estimated size plus what the run stored after it: the partial answer, tool calls and results. */
      estimatedTokens: number;
    }
  | { status: 'failed'; content: string; error: LlmError };

/** Applies to tools that set no timeout of their own. */
export const defaultToolTimeoutMs = 120_000;

const budgetExhaustedNote: ChatMessage = {
  role: 'system',
  content: 'The tool budget for this turn is used up. Do not call tools: answer now with what you have, and say what is left undone.',
};

/** The tool-calling loop of docs/agent.md, "How a turn works", step 4: stream, run the requested tools, repeat until the model answers. */
export async function runAgentLoop(input: LoopInput): Promise<LoopOutcome> {
  const { conversation, registry, context } = input;
  for (let round = 0; ; round++) {
    const resolved = await input.setup();
    if (!resolved.ok) return { status: 'failed', content: '', error: resolved.error };
    const { setup } = resolved;
    const finalRound = round >= setup.maxIterations;
    const tools: ToolDefinition[] = finalRound ? [] : definitionsOf(setup.toolNames, registry);
    const history = await conversation.load();
    const storedBeforeRequest = history.length;
    const request = fitRequest([...setup.systemMessages, ...history, ...(finalRound ? [budgetExhaustedNote] : [])], tools, setup.contextWindow);
    const estimatedSinceRequest = async (): Promise<number> =>
      request.estimatedTokens + estimateTokens((await conversation.load()).slice(storedBeforeRequest));
    const result = await streamRound(
      setup.backend,
      {
        model: setup.model,
        messages: request.messages,
        ...(tools.length > 0 && { tools }),
        temperature: setup.temperature,
        think: setup.think,
        contextWindow: setup.contextWindow,
        signal: context.signal,
      },
      context,
      { maxAnswerCharacters: input.maxAnswerCharacters, checkpoint: input.drafts && new DraftCheckpoint(input.drafts) },
    );

    if (result.error?.code === 'aborted' || (context.signal.aborted && !result.error)) {
      await conversation.append([{ role: 'assistant', content: result.text, ...thinkingOf(result), stopped: true }]);
      return { status: 'stopped', content: result.text, estimatedTokens: await estimatedSinceRequest() };
    }
    if (result.error) {
      if (result.text !== '') await conversation.append([{ role: 'assistant', content: result.text, ...thinkingOf(result) }]);
      return { status: 'failed', content: result.text, error: result.error };
    }
    if (finalRound || result.toolCalls.length === 0) {
      await conversation.append([{ role: 'assistant', content: result.text, ...thinkingOf(result) }]);
      const answerTokens = Math.ceil((result.text.length + result.thinking.length) / charactersPerToken);
      return {
        status: 'completed',
        content: result.text,
        ...(result.usage && { usage: result.usage }),
        estimatedTokens: request.estimatedTokens + answerTokens,
        cut: request.cut,
        contextWindow: setup.contextWindow,
      };
    }

    if (result.thinking !== '') context.emit({ type: 'turn_thinking', thinking: result.thinking, is_subagent: context.isSubagent });
    // Written ahead: the calls are stored before they run and each result as it arrives, so a crash leaves a true record.
    await conversation.append([{ role: 'assistant', content: result.text, ...thinkingOf(result), tool_calls: result.toolCalls }]);
    const images = await runToolCalls(result.toolCalls, setup, input, history);
    if (images.length > 0) await conversation.appendToContext(images);
    if (context.signal.aborted) {
      await conversation.append([{ role: 'assistant', content: '', stopped: true }]);
      return { status: 'stopped', content: '', estimatedTokens: await estimatedSinceRequest() };
    }
  }
}

/**
 * Runs the calls one after another, in the order the model asked for them, storing each
 * result as it arrives; each gets a result, even after a stop. Answers the images tools
 * loaded, as user messages for the model.
 */
async function runToolCalls(calls: ToolCall[], setup: RoundSetup, input: LoopInput, history: readonly ContextMessage[]): Promise<NewMessage[]> {
  const inherited = input.context.outside;
  const allow = inherited ? setup.untrustedAllow.filter((name) => inherited.allow.includes(name)) : setup.untrustedAllow;
  const images: NewMessage[] = [];
  // The context as the round loaded it, plus each result as it is stored: a page read by the call before taints this one.
  const read: ContextMessage[] = [...history];
  for (const call of calls) {
    const own = outsideReadingOf(read);
    const reading: OutsideReading = inherited ? combineReadings(inherited, own) : own;
    const context: ToolContext = {
      ...input.context,
      approvalPolicies: setup.approvalPolicies,
      jailKinds: setup.jailKinds,
      sessionProfileId: setup.sessionProfileId,
      outside: { ...reading, allow },
    };
    const announced = { call_id: call.id, tool: call.name, args: call.arguments, is_subagent: context.isSubagent };
    context.emit({ type: 'tool_started', ...announced });
    const result = await executeToolCall(call, {
      registry: input.registry,
      allowedNames: setup.toolNames,
      context,
      defaultTimeoutMs: input.toolTimeoutMs,
      authorize: (entry, args) =>
        input.authorize({
          callId: call.id,
          tool: entry.tool,
          args,
          policies: setup.approvalPolicies,
          ...(setup.profileId !== undefined && { profileId: setup.profileId }),
          context,
          outsideReason: outflowReason(reading, { tool: entry.tool.name, outflow: outflowOf(entry.tool, args) }, allow),
        }),
    });
    const source = result.outside?.source;
    const stored = {
      role: 'tool',
      content: source === undefined ? result.output : wrapOutsideContent(source, result.output),
      tool_call_id: call.id,
      name: call.name,
      success: result.success,
      ...(source !== undefined && { untrusted_source: source }),
      ...(result.outside?.quotable === false && { agent_written: true }),
    } satisfies NewMessage;
    await input.conversation.append([stored]);
    read.push(stored);
    context.emit({ type: 'tool_call', ...announced, result: result.output, success: result.success });
    const image = loadedImage(result.metadata);
    if (image) {
      const note = `[Image loaded by ${call.name}: ${image.description}]`;
      images.push({
        role: 'user',
        content: source === undefined ? note : wrapOutsideContent(source, note),
        images: [image.base64],
        agent_written: true,
        ...(source !== undefined && { untrusted_source: source }),
      });
    }
  }
  return images;
}

/** Tools hand images to the model through `metadata.image = {base64, description}`. */
function loadedImage(metadata: Record<string, unknown> | undefined): { base64: string; description: string } | undefined {
  const image = metadata?.['image'] as { base64?: unknown; description?: unknown } | undefined;
  if (typeof image?.base64 !== 'string') return undefined;
  // Re-encoded: a tool's string becomes plain base64, which the backends stream into requests unescaped.
  const base64 = Buffer.from(image.base64, 'base64').toString('base64');
  return { base64, description: typeof image.description === 'string' ? image.description : 'image' };
}

export function definitionsOf(names: readonly string[], registry: ToolRegistry): ToolDefinition[] {
  return names.flatMap((name) => {
    const tool = registry.get(name)?.tool;
    return tool ? [{ name: tool.name, description: tool.description, parameters: tool.parameters }] : [];
  });
}

function thinkingOf(result: RoundResult): { thinking?: string } {
  return result.thinking === '' ? {} : { thinking: result.thinking };
}
