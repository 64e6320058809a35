import type { ChatRequest, LlmBackend, LlmError, ToolCall, Usage } from '../llm/types.ts';
import type { ToolContext } from '../tools/tool.ts';
import type { DraftCheckpoint } from './draft-checkpoint.ts';

export interface RoundResult {
  text: string;
  thinking: string;
  toolCalls: ToolCall[];
  usage?: Usage;
  error?: LlmError;
}

/**
 * Streams one LLM call, forwarding reasoning and answer text as they arrive and
 * checkpointing them when given a checkpoint. Sub-agents stream nothing: their reasoning
 * reaches the parent as turn_thinking.
 */
export async function streamRound(
  backend: LlmBackend,
  request: ChatRequest,
  context: ToolContext,
  options: { maxAnswerCharacters: number; checkpoint?: DraftCheckpoint | undefined },
): Promise<RoundResult> {
  const { checkpoint, maxAnswerCharacters } = options;
  const result: RoundResult = { text: '', thinking: '', toolCalls: [] };
  const live = !context.isSubagent;
  let thinkingOpen = false;
  const closeThinking = () => {
    if (thinkingOpen && live) context.emit({ type: 'thinking_end' });
    thinkingOpen = false;
  };

  reading: for await (const event of backend.stream(request)) {
    if ((event.type === 'text_delta' || event.type === 'thinking_delta') && result.text.length + result.thinking.length + event.delta.length > maxAnswerCharacters) {
      // Leaving the loop ends the backend's request; the answer so far stands, with a note.
      closeThinking();
      const note = `\n\n[The answer was cut here: it passed ${maxAnswerCharacters.toLocaleString('en')} characters (MAX_ANSWER_CHARS).]`;
      result.text += note;
      checkpoint?.add('text', note);
      if (live) context.emit({ type: 'stream_delta', delta: note });
      break reading;
    }
    switch (event.type) {
      case 'thinking_delta':
        thinkingOpen = true;
        result.thinking += event.delta;
        checkpoint?.add('thinking', event.delta);
        if (live) context.emit({ type: 'thinking_delta', delta: event.delta });
        break;
      case 'text_delta':
        closeThinking();
        result.text += event.delta;
        checkpoint?.add('text', event.delta);
        if (live) context.emit({ type: 'stream_delta', delta: event.delta });
        break;
      case 'tool_call':
        closeThinking();
        result.toolCalls.push(event.call);
        break;
      case 'done':
        if (event.usage) result.usage = event.usage;
        break;
      case 'error':
        result.error = event.error;
        break;
    }
  }
  closeThinking();
  await checkpoint?.close();
  return result;
}
