// Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, LM Studio,
// OpenRouter) through the `openai` client.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { assembleBackend, type StreamProgress } from './assemble-backend.ts';
import { DeferredStrings, unsafeDeferredString } from './deferred-strings.ts';
import { errorMessage, isRecord, networkFailureReason } from './errors.ts';
import type { LlmDeltaEvent } from './guarded-stream.ts';
import { toOpenAIMessage, toOpenAITool } from './openai-messages.ts';
import { ThinkTagSplitter, type SplitPiece } from './think-tag-splitter.ts';
import { ToolCallAssembler } from './tool-call-assembler.ts';
import type { ChatRequest, ListedModel, LlmBackend, LlmError, Usage } from './types.ts';

export interface OpenAIBackendOptions {
  baseUrl: string;
  apiKey: string;
  defaultModel: string;
  /** No chunk from the endpoint for this long ends the call with `llm_timeout`. */
  stallTimeoutMs: number;
}


/** Reasoning fields some servers add to the delta: `reasoning_content` (DeepSeek, vLLM), `reasoning` (OpenRouter, Ollama). */
interface ReasoningDelta {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

export function createOpenAIBackend(options: OpenAIBackendOptions): LlmBackend {
  const client = new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey || 'not-needed', maxRetries: 0 });
  const endpoint = `OpenAI-compatible endpoint at ${options.baseUrl}`;

  async function* produce(request: ChatRequest, progress: StreamProgress): AsyncGenerator<LlmDeltaEvent, Usage | undefined> {
    const deferred = new DeferredStrings();
    const body = toOpenAIRequest(request, options.defaultModel, (dataUrl) => deferred.hold(dataUrl));
    // A request with images gets a client of its own whose fetch streams them (see DeferredStrings).
    const requestClient = deferred.holding ? client.withOptions({ fetch: deferred.fetch(globalThis.fetch) }) : client;
    const stream = await requestClient.chat.completions.create(body, { signal: request.signal });
    progress.connected = true;
    progress.touch();
    const splitter = new ThinkTagSplitter();
    const toolCalls = new ToolCallAssembler();
    let usage: Usage | undefined;
    for await (const chunk of stream) {
      progress.touch();
      if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      const reasoning = (delta as ReasoningDelta).reasoning_content ?? (delta as ReasoningDelta).reasoning;
      if (reasoning) yield { type: 'thinking_delta', delta: reasoning };
      if (delta.content) yield* toDeltaEvents(splitter.push(delta.content));
      for (const fragment of delta.tool_calls ?? []) toolCalls.add(fragment);
      if (choice.finish_reason) {
        yield* toDeltaEvents(splitter.flush());
        for (const call of toolCalls.drain()) yield { type: 'tool_call', call };
      }
    }
    yield* toDeltaEvents(splitter.flush());
    for (const call of toolCalls.drain()) yield { type: 'tool_call', call };
    return usage;
  }

  function describeFailure(error: unknown, progress: StreamProgress, modelSetting = 'OPENAI_MODEL'): LlmError {
    const unsafe = unsafeDeferredString(error);
    if (unsafe) return { code: 'llm_error', message: unsafe.message };
    if (error instanceof APIConnectionTimeoutError) {
      return { code: 'llm_unreachable', message: `The ${endpoint} did not answer in time. Check that the server is running and not overloaded.` };
    }
    if (error instanceof APIError && error.status !== undefined) {
      return { code: 'llm_error', message: `The ${endpoint} returned ${error.status}: ${apiErrorMessage(error)}${statusHint(error.status, modelSetting)}` };
    }
    const reason = networkFailureReason(error);
    if (error instanceof APIConnectionError || (reason && !progress.connected)) {
      return {
        code: 'llm_unreachable',
        message: `Cannot reach the ${endpoint} (${reason ?? errorMessage(error)}). Check OPENAI_BASE_URL and that the server is running.`,
      };
    }
    if (reason) {
      return { code: 'llm_unreachable', message: `The connection to the ${endpoint} broke mid-reply (${reason}). Check that the server is still running.` };
    }
    if (error instanceof APIError) {
      return { code: 'llm_error', message: `The ${endpoint} reported an error: ${apiErrorMessage(error)}` };
    }
    return { code: 'llm_error', message: `The ${endpoint} sent a reply that could not be read: ${errorMessage(error)}` };
  }

  return assembleBackend({
    id: 'openai',
    name: `The ${endpoint}`,
    defaultModel: options.defaultModel,
    stallTimeoutMs: options.stallTimeoutMs,
    produce,
    describeFailure,
    async fetchModels(signal) {
      const listed: ListedModel[] = [];
      for await (const model of client.models.list({ signal })) {
        const contextLength = (model as { context_length?: unknown }).context_length;
        listed.push({ name: model.id, ...(typeof contextLength === 'number' && { context_length: contextLength }) });
      }
      return listed;
    },
    async fetchEmbeddings(request, signal) {
      // Floats asked for by name: the client otherwise asks for base64, which some compatible servers ignore.
      const response = await client.embeddings.create({ model: request.model, input: request.input, encoding_format: 'float' }, { signal });
      return [...response.data].sort((first, second) => first.index - second.index).map((item) => item.embedding);
    },
  });
}

function toOpenAIRequest(request: ChatRequest, defaultModel: string, holdImage: (dataUrl: string) => string): ChatCompletionCreateParamsStreaming {
  return {
    model: request.model || defaultModel,
    messages: request.messages.map((message) => toOpenAIMessage(message, holdImage)),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.tools?.length ? { tools: request.tools.map(toOpenAITool) } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.responseSchema
      ? { response_format: { type: 'json_schema', json_schema: { name: 'response', schema: request.responseSchema, strict: true } } }
      : {}),
  };
}

function* toDeltaEvents(pieces: SplitPiece[]): Generator<LlmDeltaEvent> {
  for (const piece of pieces) {
    yield piece.kind === 'thinking' ? { type: 'thinking_delta', delta: piece.text } : { type: 'text_delta', delta: piece.text };
  }
}

/** The server's own words: `{error:{message}}`, `{error:"…"}` or a plain-text body. */
function apiErrorMessage(error: APIError): string {
  const body: unknown = error.error;
  if (typeof body === 'string') return errorMessage(body);
  if (isRecord(body) && typeof body['message'] === 'string') return errorMessage(body['message']);
  return errorMessage(error.message.replace(/^\d{3} /, ''));
}

function statusHint(status: number, modelSetting: string): string {
  if (status === 401 || status === 403) return ' — check OPENAI_API_KEY.';
  if (status === 404) return ` — check ${modelSetting}, and OPENAI_BASE_URL (it usually ends in /v1).`;
  return '';
}
