import type { ChatMessage, ToolDefinition } from '../llm/types.ts';

export const charactersPerToken = 4;

/** What a chat template adds around each message (role markers, separators), in characters. */
const perMessageCharacters = 16;

/** A vision model's cost for one image; models differ (256–1,000+), this is a middle guess. */
const tokensPerImage = 576;

/** A rough count for when the backend reports no usage. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  return Math.ceil(messageCharacters(messages) / charactersPerToken);
}

/** The characters the model reads for these messages, template overhead included. */
export function messageCharacters(messages: readonly ChatMessage[]): number {
  let characters = 0;
  for (const message of messages) characters += characterCount(message);
  return characters;
}

export function characterCount(message: ChatMessage): number {
  let characters = perMessageCharacters + message.content.length + (message.thinking?.length ?? 0);
  for (const call of message.tool_calls ?? []) characters += call.name.length + JSON.stringify(call.arguments).length;
  characters += (message.images?.length ?? 0) * tokensPerImage * charactersPerToken;
  return characters;
}

export function toolCharacters(tools: readonly ToolDefinition[]): number {
  return tools.length === 0 ? 0 : JSON.stringify(tools).length;
}

/** A whole request as the model sees it: messages, template overhead and tool schemas. */
export function estimateRequestTokens(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
  return Math.ceil((messageCharacters(messages) + toolCharacters(tools)) / charactersPerToken);
}
