// Every frame the server sends over a session's WebSocket (docs/protocol.md, "The session WebSocket"). The web
// client and the tests rely on this union and nothing else.

import type { PersonName } from '../people/person.ts';

export interface ToolSummary {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  source: 'builtin' | 'user' | 'mcp';
  /** The MCP server an `mcp` tool comes from. */
  server?: string;
}

export type AgentEvent =
  /** Sent on connect when no run is active, and when a run ends without stream_end/stream_stopped (after an error). */
  | { type: 'session_sync'; running: boolean }
  | { type: 'stream_start' }
  /** A model call of the run waits for a free place at its backend (LLM_MAX_CONCURRENT): `queued`; it got one: `running`. */
  | { type: 'run_status'; status: 'queued' | 'running' }
  | { type: 'plan_ready'; plan: string }
  | { type: 'thinking_delta'; delta: string }
  | { type: 'thinking_end' }
  /** The whole reasoning block of a round that called tools (sub-agents send only this, no deltas). */
  | { type: 'turn_thinking'; thinking: string; is_subagent: boolean }
  | { type: 'tool_started'; call_id: string; tool: string; args: Record<string, unknown>; is_subagent: boolean }
  | {
      type: 'tool_call';
      call_id: string;
      tool: string;
      args: Record<string, unknown>;
      result: string;
      success: boolean;
      is_subagent: boolean;
    }
  | { type: 'stream_delta'; delta: string }
  /**
   * `content` is the whole answer up to 64 KB; a longer one, which the client has already
   * received as deltas, is left out (`length` says how long it is; GET /sessions/:id has it).
   */
  | { type: 'stream_end'; content?: string; length: number; context_tokens: number; max_context_tokens: number }
  | { type: 'stream_stopped'; content?: string; length: number; reason: 'user' | 'shutdown' }
  | { type: 'context_compressed'; messages_before: number; messages_after: number }
  | { type: 'profile_switched'; profile_id: string; profile_name: string }
  | { type: 'tools_changed'; tools: ToolSummary[] }
  /** A tool call waits for the person's decision (docs/agent.md, "Approvals"); `expires_at` is when it is denied unanswered. */
  | {
      type: 'approval_required';
      call_id: string;
      tool: string;
      args: Record<string, unknown>;
      subject: string;
      /** Why it asks: the rule, or the tool's own reason. */
      reason: string;
      /** A `readonly` rule did not match: why the command is not read-only ("`-D` writes a file"). */
      not_read_only?: string;
      expires_at: string;
      is_subagent: boolean;
      /** The person whose session's run asks; null when the session names nobody who lives here. */
      asked_by: PersonName | null;
      /** Who may decide it (docs/people.md, *Approvals in a household*). */
      deciders: PersonName[];
      /** Added by the session socket for the person it serves: whether they may decide it (a child's own ask: false). */
      can_decide?: boolean;
    }
  | {
      type: 'approval_resolved';
      call_id: string;
      decision: 'allow' | 'deny';
      by: 'user' | 'rule' | 'timeout' | 'stop';
      /** `session`: allowed for the rest of the session. */
      remember: 'once' | 'session';
      /** Who decided, when `by` is `user`, and where: `page`, `rest` or a channel's id (`telegram`). */
      decider?: PersonName;
      via?: string;
    }
  | { type: 'error'; code: AgentErrorCode; message: string };

export type AgentErrorCode =
  | 'invalid_frame'
  | 'session_busy'
  | 'approval_not_found'
  /** The person may not decide that call (a child's own ask); the message says who may. */
  | 'forbidden'
  /** Regenerate and edit (docs/agent.md, "Branches: regenerate and edit") */
  | 'message_not_found'
  | 'message_not_editable'
  | 'nothing_to_regenerate'
  | 'llm_unreachable'
  | 'llm_timeout'
  | 'llm_error'
  | 'internal_error';

export type AgentEventType = AgentEvent['type'];

/** How much of an answer a run-end event repeats: beyond this, the deltas already carried it. */
export const maxRepeatedAnswerCharacters = 65_536;

/** The `content` and `length` fields of a run-end event. */
export function answerFields(content: string): { content?: string; length: number } {
  return content.length <= maxRepeatedAnswerCharacters ? { content, length: content.length } : { length: content.length };
}

export type EventOf<Type extends AgentEventType> = Extract<AgentEvent, { type: Type }>;

/** Events that end a run; exactly one of them is the last event of every run. */
export function isRunEnd(event: AgentEvent): boolean {
  return event.type === 'stream_end' || event.type === 'stream_stopped' || (event.type === 'session_sync' && !event.running);
}
