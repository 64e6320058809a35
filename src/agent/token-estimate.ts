import type { ChatMessage } from '../llm/types.ts';

const charactersPerToken = 4;

/** A rough count for when the backend reports no usage. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let characters = 0;
  for (const message of messages) {
    characters += message.content.length + (message.thinking?.length ?? 0);
    for (const call of message.tool_calls ?? []) characters += call.name.length + JSON.stringify(call.arguments).length;
  }
  return Math.ceil(characters / charactersPerToken);
}
