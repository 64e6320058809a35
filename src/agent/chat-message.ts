import type { ChatMessage } from '../llm/types.ts';
import type { NewMessage } from '../store/message.ts';

/** A stored message as the model receives it: the flags only the server and the UI read are left out. */
export function toChatMessage(message: NewMessage): ChatMessage {
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
