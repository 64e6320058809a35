import type { ChatMessage, LlmBackend, LlmError } from '../llm/types.ts';
import { fitRequest } from './fit-request.ts';

export type PlanningResult = { kind: 'direct' } | { kind: 'plan'; plan: string } | { kind: 'failed'; error: LlmError };

export interface PlanningInput {
  backend: LlmBackend;
  model: string;
  systemMessages: ChatMessage[];
  history: ChatMessage[];
  toolNames: readonly string[];
  profileNames: readonly string[];
  contextWindow: number;
  signal: AbortSignal;
}

const planningTemperature = 0.2;

function instruction(toolNames: readonly string[], profileNames: readonly string[]): string {
  return [
    'Planning step. Decide how to handle the last user message before acting.',
    'If it is simple (small talk, a question you can answer directly, or a single step), reply with exactly: DIRECT',
    'Otherwise reply with a short numbered plan, at most 7 steps, one line each, naming the tools or profiles each step uses. No preamble.',
    `Tools: ${toolNames.join(', ') || 'none'}.`,
    `Profiles: ${profileNames.join(', ')}.`,
  ].join('\n');
}

/** docs/agent.md, "How a turn works", step 3: one non-streaming call without tools; a plan needs numbered steps. */
export async function runPlanning(input: PlanningInput): Promise<PlanningResult> {
  const messages: ChatMessage[] = [
    ...input.systemMessages,
    ...input.history,
    { role: 'system', content: instruction(input.toolNames, input.profileNames) },
  ];
  const result = await input.backend.complete({
    model: input.model,
    messages: fitRequest(messages, [], input.contextWindow).messages,
    temperature: planningTemperature,
    think: false,
    contextWindow: input.contextWindow,
    signal: input.signal,
  });
  if (!result.ok) return { kind: 'failed', error: result.error };
  return classifyPlan(result.completion.content);
}

export function classifyPlan(reply: string): PlanningResult {
  const text = reply.trim();
  if (/^DIRECT\b/i.test(text) || !/^\s*\d+[.)]\s+\S/m.test(text)) return { kind: 'direct' };
  return { kind: 'plan', plan: text };
}
