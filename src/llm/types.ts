// The contract between the agent and a language-model backend. Backends know
// nothing of sessions or tools' code: they turn a request into a stream of events.
import type { BackendId } from '../backend-ids.ts';

export type JsonSchema = Record<string, unknown>;

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Raw argument text the model sent when it was not a JSON object. */
  invalid_arguments?: string;
}

/** One message as the model sees it; field names follow the wire protocol (docs/agent.md, "How a turn works"). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  thinking?: string;
  /** Base64 image data without a data: prefix. */
  images?: string[];
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Tool name, on tool results. */
  name?: string;
}

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  temperature?: number;
  think?: boolean;
  /** Context window to request (Ollama's num_ctx). */
  contextWindow?: number;
  /** Ask for JSON output that matches this schema. */
  responseSchema?: JsonSchema;
  signal: AbortSignal;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export type LlmErrorCode =
  /** The HTTP request could not be made or the connection broke. */
  | 'llm_unreachable'
  /** The backend answered with an error (bad model, bad request, server error). */
  | 'llm_error'
  /** The backend sent nothing for LLM_STALL_TIMEOUT_S (before its headers or mid-stream). */
  | 'llm_timeout'
  /** The request was cancelled through its AbortSignal. */
  | 'aborted';

export interface LlmError {
  code: LlmErrorCode;
  message: string;
}

/** One event of a streamed completion. A stream ends with exactly one `done` or `error`. */
export type LlmStreamEvent =
  | { type: 'thinking_delta'; delta: string }
  | { type: 'text_delta'; delta: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'done'; usage?: Usage }
  | { type: 'error'; error: LlmError };

export interface Completion {
  content: string;
  thinking: string;
  toolCalls: ToolCall[];
  usage?: Usage;
}

export type CompletionResult = { ok: true; completion: Completion } | { ok: false; error: LlmError };

export type { BackendId };

/** One model a backend offers (GET /models). */
export interface ListedModel {
  name: string;
  /** Bytes on disk (Ollama). */
  size?: number;
  context_length?: number;
}

export type ModelList = { ok: true; models: ListedModel[] } | { ok: false; error: LlmError };

export interface EmbedRequest {
  model: string;
  input: string[];
  signal?: AbortSignal;
}

/** One vector per input, in order; a failure says why in words, and `code` whether the backend could be reached at all. */
export type EmbedResult = { success: true; embeddings: number[][] } | { success: false; error: string; code: LlmErrorCode };

export interface LlmBackend {
  readonly id: BackendId;
  /** The model used when a profile names none. */
  readonly defaultModel: string;
  stream(request: ChatRequest): AsyncIterable<LlmStreamEvent>;
  /** A whole, non-streamed completion (planning, summaries, titles, extraction). */
  complete(request: ChatRequest): Promise<CompletionResult>;
  /** The models the backend offers now (Ollama's /api/tags, an OpenAI-compatible /models). */
  listModels(signal: AbortSignal): Promise<ModelList>;
  /** Embedding vectors of texts (Ollama's /api/embed, an OpenAI-compatible /embeddings); never throws. */
  embed(request: EmbedRequest): Promise<EmbedResult>;
}
