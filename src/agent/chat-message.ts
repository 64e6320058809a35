import type { ChatMessage } from '../llm/types.ts';
import type { NewMessage } from '../store/message.ts';

/** A message of the model's context, with what the loop knows of where its text came from (never sent to a backend). */
export interface ContextMessage extends ChatMessage {
  untrusted_source?: string;
  agent_written?: boolean;
}

/** A stored message as the model receives it: the flags only the server and the UI read are left out. */
export function toChatMessage(message: NewMessage): ContextMessage {
  return {
    role: message.role,
    content: message.content,
    ...(message.thinking !== undefined && { thinking: message.thinking }),
    ...(message.images && { images: message.images }),
    ...(message.tool_calls && { tool_calls: message.tool_calls }),
    ...(message.tool_call_id !== undefined && { tool_call_id: message.tool_call_id }),
    ...(message.name !== undefined && { name: message.name }),
    ...(message.untrusted_source !== undefined && { untrusted_source: message.untrusted_source }),
    ...((message.agent_written === true || message.is_summary === true) && { agent_written: true }),
  };
}
