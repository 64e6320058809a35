import type { AgentEvent } from '../../protocol/events.ts';

/** One `chat.completion.chunk` of OpenAI's streaming answer. */
export interface CompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: [{ index: 0; delta: ChunkDelta; finish_reason: 'stop' | null }];
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  /** The model's reasoning, and the tools Hearth runs: several clients show it apart from the answer. */
  reasoning_content?: string;
}

/** What one of the run's events becomes in the stream: chunks, and whether the stream ends (with an error to tell). */
export interface StreamStep {
  deltas: ChunkDelta[];
  end?: { error?: { message: string; code: string } };
}

/** The answer's identity in every chunk. */
export interface CompletionIdentity {
  id: string;
  model: string;
  created: number;
}

/**
 * Turns a Hearth run's events into OpenAI's chunks (docs/openai-compatible.md, "Streaming"): the
 * answer as `content`, reasoning and tool activity as `reasoning_content`, a call waiting for a
 * person as a line of `content`, and the run's end as `finish_reason: "stop"`. Tool calls are Hearth's:
 * none reaches the client as `tool_calls`.
 */
export class CompletionChunks {
  private error: { message: string; code: string } | undefined;
  /** The calls told as waiting: only their decisions are told. */
  private readonly waiting = new Set<string>();

  constructor(private readonly identity: CompletionIdentity) {}

  /** The first chunk: the assistant's role, before anything of the run arrives. */
  opening(): CompletionChunk {
    return this.chunk({ role: 'assistant', content: '' });
  }

  /** The last chunk. */
  closing(): CompletionChunk {
    return { ...this.chunk({}), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
  }

  chunk(delta: ChunkDelta): CompletionChunk {
    const { id, model, created } = this.identity;
    return { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: null }] };
  }

  step(event: AgentEvent): StreamStep {
    switch (event.type) {
      case 'stream_delta':
        return { deltas: [{ content: event.delta }] };
      case 'thinking_delta':
        return { deltas: [{ reasoning_content: event.delta }] };
      case 'tool_started':
        return { deltas: [{ reasoning_content: `\n⚙ ${event.tool}${event.is_subagent ? ' (sub-agent)' : ''}\n` }] };
      case 'approval_required':
        this.waiting.add(event.call_id);
        return { deltas: [{ content: waitingLine(event) }] };
      case 'approval_resolved':
        if (!this.waiting.delete(event.call_id)) return { deltas: [] };
        return { deltas: [{ content: resolvedLine(event) }] };
      case 'error':
        // The run ends next (session_sync); the error is told then, in OpenAI's shape.
        this.error = { message: event.message, code: event.code };
        return { deltas: [] };
      case 'stream_end':
      case 'stream_stopped':
        return { deltas: [], end: {} };
      case 'session_sync':
        return event.running ? { deltas: [] } : { deltas: [], end: this.error ? { error: this.error } : {} };
      default:
        return { deltas: [] };
    }
  }
}

type ApprovalRequired = Extract<AgentEvent, { type: 'approval_required' }>;
type ApprovalResolved = Extract<AgentEvent, { type: 'approval_resolved' }>;

/** "⏳ Waiting for approval: terminal `rm -rf /tmp/x` — decide in Hearth's page or Telegram". */
export function waitingLine(event: ApprovalRequired): string {
  const subject = event.subject !== '' && event.subject !== event.tool ? ` ${codeSpan(event.subject)}` : '';
  const who = event.deciders.length > 0 && event.deciders.every((person) => person.id !== event.asked_by?.id) ? ` (${event.deciders.map((person) => person.name).join(' or ')})` : '';
  return `\n\n⏳ Waiting for approval: ${event.tool}${subject} — decide in Hearth's page or Telegram${who}.\n\n`;
}

function resolvedLine(event: ApprovalResolved): string {
  if (event.decision === 'allow') return `✅ Allowed${event.decider ? ` by ${event.decider.name}` : ''}.\n\n`;
  if (event.by === 'timeout') return '⛔ Nobody decided in time: denied.\n\n';
  if (event.by === 'stop') return '⛔ Stopped.\n\n';
  return `⛔ Denied${event.decider ? ` by ${event.decider.name}` : ''}.\n\n`;
}

/** Text as one Markdown code span, whatever backticks it holds. */
function codeSpan(text: string): string {
  const oneLine = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  const longestRun = Math.max(0, ...(oneLine.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const padding = oneLine.startsWith('`') || oneLine.endsWith('`') ? ' ' : '';
  return `${fence}${padding}${oneLine.replace(/\n/g, ' ')}${padding}${fence}`;
}
