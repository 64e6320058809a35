import type { LlmBackend, LlmError } from '../llm/types.ts';
import type { MemoryFact } from '../store/memory-repository.ts';
import { clip } from './clip.ts';

const instructions = `You write the memory note a personal assistant reads before every conversation with the one person who uses it.
From the facts below, write a short narrative summary of what you know about that person: at most 120 words,
in the third person ("The user …"), the most useful facts first, keeping exact names, hosts, paths and numbers.
Plain text only: no heading, no list, no preamble.`;

/** The summary rides along with every LLM call, so it is kept short whatever the model writes. */
export const summaryLimit = 1_500;
const summaryTemperature = 0.2;

export interface SummaryInput {
  backend: LlmBackend;
  model: string;
  facts: readonly MemoryFact[];
  contextWindow: number;
  signal: AbortSignal;
}

export type SummaryResult = { ok: true; summary: string } | { ok: false; error: LlmError };

/** Writes the narrative summary from the facts (one plain-text, non-streamed call). */
export async function summariseFacts(input: SummaryInput): Promise<SummaryResult> {
  const facts = [...input.facts]
    .sort((first, second) => first.category.localeCompare(second.category) || first.key.localeCompare(second.key))
    .map((fact) => `- ${fact.category} / ${fact.key}: ${clip(fact.value, 300)}`)
    .join('\n');
  const result = await input.backend.complete({
    model: input.model,
    messages: [
      { role: 'system', content: instructions },
      { role: 'user', content: `Facts:\n${facts}` },
    ],
    temperature: summaryTemperature,
    think: false,
    contextWindow: input.contextWindow,
    signal: input.signal,
  });
  if (!result.ok) return result;
  const summary = result.completion.content.trim();
  if (summary === '') return { ok: false, error: { code: 'llm_error', message: 'the model wrote an empty summary' } };
  return { ok: true, summary: summary.length > summaryLimit ? `${summary.slice(0, summaryLimit).trimEnd()}…` : summary };
}
