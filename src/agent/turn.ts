import type { Config } from '../config.ts';
import type { BackendRegistry } from '../llm/backend-registry.ts';
import type { ChatMessage, LlmError } from '../llm/types.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import type { Db } from '../store/database.ts';
import type { Message } from '../store/message.ts';
import { appendMessage, appendMessages, listMessages } from '../store/messages-repository.ts';
import { findSession, updateSession } from '../store/sessions-repository.ts';
import type { ToolContext } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { runAgentLoop, type Conversation, type RoundSetup } from './agent-loop.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import { estimateTokens } from './token-estimate.ts';

/** Applies to tools that set no timeout of their own. */
const defaultToolTimeoutMs = 120_000;

export interface AgentDependencies {
  db: Db;
  config: Config;
  profiles: ProfileRegistry;
  tools: ToolRegistry;
  backends: BackendRegistry;
  persona: string;
}

export interface UserInput {
  content: string;
  /** Base64 or data: URIs. */
  images?: string[];
  files?: { name: string; path: string }[];
}

export type TurnOutcome =
  | { status: 'completed'; content: string; contextTokens: number }
  | { status: 'stopped'; content: string }
  | { status: 'failed'; content: string; error: LlmError };

/** One whole turn of DESIGN §6 for a stored session; emits its events and ends with exactly one run-end event. */
export async function runTurn(sessionId: string, input: UserInput, deps: AgentDependencies, context: ToolContext): Promise<TurnOutcome> {
  const { db, config } = deps;
  await appendMessage(db, sessionId, {
    role: 'user',
    content: withAttachments(input),
    ...(input.images?.length && { images: input.images.map(stripDataUri) }),
  });
  await titleFromFirstMessage(db, sessionId, input.content);
  // DESIGN §6 step 2 (compression) and step 3 (planning) run here once they exist.

  let lastRequest: ChatMessage[] = [];
  const conversation: Conversation = {
    load: async () => {
      lastRequest = (await listMessages(db, sessionId, 'context')).map(toChatMessage);
      return lastRequest;
    },
    append: (messages) => appendMessages(db, sessionId, messages),
  };
  const outcome = await runAgentLoop({
    conversation,
    setup: () => roundSetup(sessionId, deps),
    registry: deps.tools,
    toolTimeoutMs: defaultToolTimeoutMs,
    context,
  });

  switch (outcome.status) {
    case 'completed': {
      const contextTokens = outcome.usage
        ? outcome.usage.promptTokens + outcome.usage.completionTokens
        : estimateTokens([...lastRequest, { role: 'assistant', content: outcome.content }]);
      await updateSession(db, sessionId, { contextTokens });
      context.emit({ type: 'stream_end', content: outcome.content, context_tokens: contextTokens, max_context_tokens: config.OLLAMA_NUM_CTX });
      return { status: 'completed', content: outcome.content, contextTokens };
    }
    case 'stopped':
      context.emit({ type: 'stream_stopped', content: outcome.content });
      return outcome;
    case 'failed':
      context.emit({ type: 'error', code: outcome.error.code === 'llm_unreachable' ? 'llm_unreachable' : 'llm_error', message: outcome.error.message });
      context.emit({ type: 'session_sync', running: false });
      return outcome;
  }
}

async function roundSetup(sessionId: string, deps: AgentDependencies) {
  const session = await findSession(deps.db, sessionId);
  const profile = session && (deps.profiles.get(session.profileId) ?? deps.profiles.get('secretary'));
  if (!profile) {
    return { ok: false as const, error: { code: 'llm_error' as const, message: `Profile "${session?.profileId}" does not exist.` } };
  }
  const choice = deps.backends.choose({
    ...(profile.backend && { backend: profile.backend }),
    ...(profile.model && { model: profile.model }),
  });
  if (!choice.ok) return choice;
  const setup: RoundSetup = {
    backend: choice.backend,
    model: choice.model,
    systemPrompt: buildSystemPrompt(deps.persona, profile),
    toolNames: profile.tools,
    temperature: profile.temperature,
    think: deps.config.OLLAMA_THINK,
    contextWindow: deps.config.OLLAMA_NUM_CTX,
    maxIterations: profile.max_iterations,
  };
  return { ok: true as const, setup };
}

async function titleFromFirstMessage(db: Db, sessionId: string, content: string): Promise<void> {
  const session = await findSession(db, sessionId);
  if (!session || session.title !== '' || session.titleSetByUser) return;
  const firstLine = content.trim().split('\n', 1)[0]?.trim() ?? '';
  const title = firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine;
  if (title !== '') await updateSession(db, sessionId, { title });
}

function withAttachments(input: UserInput): string {
  if (!input.files?.length) return input.content;
  const list = input.files.map((file) => `- ${file.name}: ${file.path}`).join('\n');
  return `${input.content}\n\nAttached files:\n${list}`;
}

function stripDataUri(image: string): string {
  return image.replace(/^data:[^;,]*;base64,/, '');
}

export function toChatMessage(message: Message): ChatMessage {
  return {
    role: message.role,
    content: message.content,
    ...(message.thinking !== undefined && { thinking: message.thinking }),
    ...(message.images && { images: message.images }),
    ...(message.tool_calls && { tool_calls: message.tool_calls }),
    ...(message.tool_call_id !== undefined && { tool_call_id: message.tool_call_id }),
    ...(message.name !== undefined && { name: message.name }),
  };
}
