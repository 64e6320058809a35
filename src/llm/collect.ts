import type { CompletionResult, LlmStreamEvent, ToolCall, Usage } from './types.ts';

/** Reads a whole stream into one completion, for callers that do not need the deltas. */
export async function collectCompletion(events: AsyncIterable<LlmStreamEvent>): Promise<CompletionResult> {
  let content = '';
  let thinking = '';
  const toolCalls: ToolCall[] = [];
  for await (const event of events) {
    switch (event.type) {
      case 'text_delta':
        content += event.delta;
        break;
      case 'thinking_delta':
        thinking += event.delta;
        break;
      case 'tool_call':
        toolCalls.push(event.call);
        break;
      case 'done': {
        const usage: Usage | undefined = event.usage;
        return { ok: true, completion: { content, thinking, toolCalls, ...(usage ? { usage } : {}) } };
      }
      case 'error':
        return { ok: false, error: event.error };
    }
  }
  throw new Error('LLM stream ended without a done or error event');
}
