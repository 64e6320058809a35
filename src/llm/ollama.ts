// Ollama's native /api/chat through the `ollama` client. The browser entry is used on
// purpose: the Node entry treats any image string naming an existing file as a path and
// sends that file, which a chat message must never be able to do.
import { randomBytes } from 'node:crypto';
import { Ollama } from 'ollama/browser';
import type { ChatRequest as OllamaChatRequest, Message as OllamaMessage, Tool as OllamaTool } from 'ollama/browser';
import { assembleBackend, type StreamProgress } from './assemble-backend.ts';
import { DeferredStrings, unsafeDeferredString } from './deferred-strings.ts';
import { errorMessage, isRecord, networkFailureReason } from './errors.ts';
import type { LlmDeltaEvent } from './guarded-stream.ts';
import { parseToolArguments } from './tool-arguments.ts';
import type { ChatMessage, ChatRequest, LlmBackend, LlmError, ToolDefinition, Usage } from './types.ts';

export interface OllamaBackendOptions {
  host: string;
  defaultModel: string;
  /** No byte from Ollama for this long ends the call with `llm_timeout`. */
  stallTimeoutMs: number;
  fetch?: typeof fetch;
}


export function createOllamaBackend(options: OllamaBackendOptions): LlmBackend {
  const baseFetch = options.fetch ?? globalThis.fetch;
  // OLLAMA_THINK is on by default, and Ollama refuses `think` for models that cannot reason.
  const modelsWithoutThinking = new Set<string>();

  async function* produce(request: ChatRequest, progress: StreamProgress): AsyncGenerator<LlmDeltaEvent, Usage | undefined> {
    const cancel = new AbortController();
    const deferred = new DeferredStrings();
    // One client per request: its fetch carries this request's signal, so an abort also
    // cancels a request still waiting for response headers (e.g. while a model loads),
    // which the client's own AbortableAsyncIterator cannot reach yet.
    const client = new Ollama({
      host: options.host,
      fetch: deferred.fetch(fetchWithSignal(baseFetch, AbortSignal.any([request.signal, cancel.signal]), progress.touch)),
    });
    try {
      const body = toOllamaRequest(request, options.defaultModel, deferred);
      if (modelsWithoutThinking.has(body.model)) delete body.think;
      const response = await client.chat({ ...body, stream: true }).catch((error: unknown) => {
        if (body.think === undefined || !isThinkingUnsupported(error)) throw error;
        modelsWithoutThinking.add(body.model);
        delete body.think;
        return client.chat({ ...body, stream: true });
      });
      progress.connected = true;
      let usage: Usage | undefined;
      for await (const chunk of response) {
        const message = chunk.message;
        if (message?.thinking) yield { type: 'thinking_delta', delta: message.thinking };
        if (message?.content) yield { type: 'text_delta', delta: message.content };
        for (const call of message?.tool_calls ?? []) {
          // Recent Ollama names its calls; older versions do not, and ids must stay unique across a session's rounds.
          const ownId = (call as { id?: unknown }).id;
          const id = typeof ownId === 'string' && ownId !== '' ? ownId : `call_${randomBytes(8).toString('hex')}`;
          const toolCall = { id, name: call.function.name, ...parseToolArguments(call.function.arguments) };
          yield { type: 'tool_call', call: toolCall };
        }
        if (chunk.done) usage = usageOf(chunk.prompt_eval_count, chunk.eval_count);
      }
      return usage;
    } finally {
      cancel.abort();
    }
  }

  function describeFailure(error: unknown, progress: StreamProgress, modelSetting = 'OLLAMA_DEFAULT_MODEL'): LlmError {
    if (error instanceof MalformedLineError) return { code: 'llm_error', message: error.message };
    const unsafe = unsafeDeferredString(error);
    if (unsafe) return { code: 'llm_error', message: unsafe.message };
    const reason = networkFailureReason(error);
    if (reason && !progress.connected) {
      return {
        code: 'llm_unreachable',
        message: `Cannot reach Ollama at ${options.host} (${reason}). Is \`ollama serve\` running? Check OLLAMA_HOST.`,
      };
    }
    if (reason) {
      return {
        code: 'llm_unreachable',
        message: `The connection to Ollama at ${options.host} broke mid-reply (${reason}). Check that Ollama is still running.`,
      };
    }
    if (isRecord(error) && typeof error['status_code'] === 'number') {
      return { code: 'llm_error', message: describeHttpError(error['status_code'], errorMessage(error), modelSetting) };
    }
    return { code: 'llm_error', message: `Ollama reported an error: ${errorMessage(error)}` };
  }

  return assembleBackend({
    id: 'ollama',
    name: `Ollama at ${options.host}`,
    defaultModel: options.defaultModel,
    stallTimeoutMs: options.stallTimeoutMs,
    produce,
    describeFailure,
    async fetchModels(signal) {
      const client = new Ollama({ host: options.host, fetch: (input, init) => baseFetch(input, { ...init, signal }) });
      const { models } = await client.list();
      return models.map((model) => ({ name: model.name, size: model.size }));
    },
    async fetchEmbeddings(request, signal) {
      const client = new Ollama({ host: options.host, fetch: fetchWithSignal(baseFetch, signal, () => {}) });
      const { embeddings } = await client.embed({ model: request.model, input: request.input });
      return embeddings;
    },
  });
}

function isThinkingUnsupported(error: unknown): boolean {
  return isRecord(error) && error['status_code'] === 400 && /does not support thinking/i.test(errorMessage(error));
}

function describeHttpError(status: number, message: string, modelSetting: string): string {
  const missingModel = /model ["']?([^"'\s,]+)["']? not found/.exec(message);
  if (status === 404 && missingModel) {
    const model = missingModel[1];
    return `Ollama returned 404: model "${model}" not found — pull it with \`ollama pull ${model}\` or set ${modelSetting}.`;
  }
  return `Ollama returned ${status}: ${message}`;
}

/**
 * Passes the request's signal to every fetch, and reports the headers and every chunk of
 * the body as a sign of life. Error bodies that are not JSON (a proxy's HTML page) are
 * wrapped as JSON, because the client logs to the console otherwise.
 */
function fetchWithSignal(baseFetch: typeof fetch, signal: AbortSignal, touch: () => void): typeof fetch {
  return async (input, init) => {
    const signals = init?.signal ? [init.signal, signal] : [signal];
    // A long request body sent as bytes skips undici's string checks and copies.
    const body = typeof init?.body === 'string' ? Buffer.from(init.body) : init?.body;
    const response = await baseFetch(input, { ...init, ...(body !== undefined && { body }), signal: AbortSignal.any(signals) });
    touch();
    if (response.ok && response.body) {
      const watched = response.body.pipeThrough(checkedLines(touch));
      return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    if (response.ok || response.headers.get('content-type')?.includes('application/json')) return response;
    const text = (await response.text()).trim();
    return new Response(JSON.stringify({ error: text || response.statusText || 'no details' }), {
      status: response.status,
      headers: { 'content-type': 'application/json' },
    });
  };
}

class MalformedLineError extends Error {}

/**
 * Passes the body through, reporting each chunk as a sign of life, and fails the stream on a
 * line that is not JSON: the client would drop it with a console warning, losing part of
 * the answer without a word.
 */
function checkedLines(touch: () => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  // The text of the line in progress: its bytes are already passed on.
  let partial = '';
  const isJson = (line: string) => {
    if (line.trim() === '') return true;
    try {
      JSON.parse(line);
      return true;
    } catch {
      return false;
    }
  };
  const failure = (line: string) =>
    new MalformedLineError(`Ollama sent a line that is not JSON, so the reply was given up: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`);
  return new TransformStream({
    transform(chunk, controller) {
      touch();
      const passedOn = partial;
      const text = passedOn + decoder.decode(chunk, { stream: true });
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      // Offset in `text` just past the last good line.
      let end = 0;
      for (const line of lines) {
        if (!isJson(line)) {
          // The good lines before it still reach the client, which then fails on the error.
          if (end > passedOn.length) controller.enqueue(encoder.encode(text.slice(passedOn.length, end)));
          throw failure(line);
        }
        end += line.length + 1;
      }
      controller.enqueue(chunk);
    },
    flush() {
      const rest = partial + decoder.decode();
      if (!isJson(rest)) throw failure(rest);
    },
  });
}

function toOllamaRequest(request: ChatRequest, defaultModel: string, deferred: DeferredStrings): OllamaChatRequest {
  return {
    model: request.model || defaultModel,
    messages: request.messages.map((message) => toOllamaMessage(message, deferred)),
    ...(request.tools?.length ? { tools: request.tools.map(toOllamaTool) } : {}),
    ...(request.think !== undefined ? { think: request.think } : {}),
    ...(request.responseSchema ? { format: request.responseSchema } : {}),
    options: {
      ...(request.contextWindow !== undefined ? { num_ctx: request.contextWindow } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    },
  };
}

function toOllamaMessage(message: ChatMessage, deferred: DeferredStrings): OllamaMessage {
  if (message.role === 'tool') {
    return { role: 'tool', content: message.content, ...(message.name ? { tool_name: message.name } : {}) };
  }
  return {
    role: message.role,
    content: message.content,
    ...(message.images?.length ? { images: message.images.map((image) => deferred.hold(image)) } : {}),
    ...(message.role === 'assistant' && message.thinking ? { thinking: message.thinking } : {}),
    ...(message.role === 'assistant' && message.tool_calls?.length
      ? { tool_calls: message.tool_calls.map((call) => ({ function: { name: call.name, arguments: call.arguments } })) }
      : {}),
  };
}

function toOllamaTool(tool: ToolDefinition): OllamaTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters as OllamaTool['function']['parameters'] },
  };
}

function usageOf(promptTokens: number | undefined, completionTokens: number | undefined): Usage | undefined {
  if (typeof promptTokens !== 'number' && typeof completionTokens !== 'number') return undefined;
  return { promptTokens: promptTokens ?? 0, completionTokens: completionTokens ?? 0 };
}
