import type { ChatMessage, ChatRequest, CompletionResult, EmbedRequest, EmbedResult, LlmBackend, LlmStreamEvent, ModelList, ToolDefinition } from '../../src/llm/types.ts';
import { hashedEmbedding } from './hashed-embedding.ts';

/** One scripted model call: the events to stream, or a generator that may wait on the request's signal. */
export type ScriptedRound = LlmStreamEvent[] | ((request: ChatRequest) => AsyncGenerator<LlmStreamEvent>);

/** What one call asked for, copied when it was made (the loop goes on appending to the arrays it passes). */
export interface ReceivedRequest {
  messages: ChatMessage[];
  tools: ToolDefinition[] | undefined;
  think: boolean | undefined;
  contextWindow: number | undefined;
}

/**
 * An in-memory `LlmBackend` that plays its rounds in order, one per `stream` call, and keeps
 * every request; a call past the script is a test's bug and fails the stream with `llm_error`.
 * `closed` counts the streams the caller ended early (left the `for await`).
 */
export class ScriptedBackend implements LlmBackend {
  readonly id = 'ollama';
  readonly defaultModel = 'scripted';
  readonly requests: ReceivedRequest[] = [];
  closed = 0;
  private next = 0;

  constructor(private readonly rounds: ScriptedRound[]) {}

  async *stream(request: ChatRequest): AsyncGenerator<LlmStreamEvent> {
    this.requests.push({
      messages: structuredClone(request.messages),
      tools: request.tools && structuredClone(request.tools),
      think: request.think,
      contextWindow: request.contextWindow,
    });
    const round = this.rounds[this.next++];
    if (round === undefined) {
      yield { type: 'error', error: { code: 'llm_error', message: `the script has no round ${this.next}` } };
      return;
    }
    let finished = false;
    try {
      if (Array.isArray(round)) yield* round;
      else yield* round(request);
      finished = true;
    } finally {
      if (!finished) this.closed++;
    }
  }

  async complete(): Promise<CompletionResult> {
    return { ok: false, error: { code: 'llm_error', message: 'ScriptedBackend streams only' } };
  }

  async listModels(): Promise<ModelList> {
    return { ok: true, models: [{ name: this.defaultModel }] };
  }

  /** Hashed bag-of-words vectors (hashed-embedding.ts), as the embedding stand-ins answer. */
  async embed(request: EmbedRequest): Promise<EmbedResult> {
    return { success: true, embeddings: request.input.map((text) => hashedEmbedding(text)) };
  }

  /** Rounds the script still holds. */
  get remaining(): number {
    return this.rounds.length - this.next;
  }
}

/** A round that calls tools and ends; ids are `call-<n>` in the order given. */
export function callsRound(...calls: { id: string; name: string; arguments?: Record<string, unknown>; invalid_arguments?: string }[]): LlmStreamEvent[] {
  return [
    ...calls.map((call): LlmStreamEvent => ({ type: 'tool_call', call: { arguments: {}, ...call } })),
    { type: 'done' },
  ];
}

/** A round that answers `text` and ends. */
export function answerRound(text: string): LlmStreamEvent[] {
  return [{ type: 'text_delta', delta: text }, { type: 'done', usage: { promptTokens: 10, completionTokens: 5 } }];
}
