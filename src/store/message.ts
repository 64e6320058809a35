/** A tool call as stored and as sent to the model. */
export interface StoredToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  invalid_arguments?: string;
}

/** The message shape shared by both buffers and the API (docs/agent.md, "How a turn works"). */
export interface Message {
  id: number;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  thinking?: string;
  images?: string[];
  tool_calls?: StoredToolCall[];
  tool_call_id?: string;
  name?: string;
  is_summary?: boolean;
  is_plan?: boolean;
  stopped?: boolean;
  /** The run was cut off by a crash or restart; the content is what had been written by then. */
  interrupted?: boolean;
  /** On tool results: whether the call succeeded. */
  success?: boolean;
  /** Display only: a later edit or regenerate replaced this message; it is kept as the previous version. */
  superseded?: boolean;
  /** Display only: the session switched to this profile here (a `system` marker the model never sees). */
  profile_switch?: { profile_id: string; profile_name: string; by: 'user' | 'agent' };
  /** User messages a schedule sent (docs/agent.md, "Schedules, reminders and notifications"), with that schedule's id. */
  scheduled?: boolean;
  schedule_id?: string;
  /** The text came from outside (a web page, an MCP server, a forwarded message): its source. Such a message taints the run (docs/security.md: Untrusted content). */
  untrusted_source?: string;
  /** A user-role message the agent wrote (a sub-agent's task, a loaded image's note, a summary), not the person's words. */
  agent_written?: boolean;
  created_at: string;
}

export type NewMessage = Omit<Message, 'id' | 'created_at'>;
