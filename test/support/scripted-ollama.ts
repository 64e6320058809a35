import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  chunkSizeOf,
  estimateTokens,
  fullContent,
  sendContent,
  sendJson,
  splitText,
  startScriptedServer,
  usageOf,
  type ChatExchange,
  type RecordedRequest,
  type ScriptedLlm,
  type ScriptedToolCall,
  type ServerOptions,
} from './scripted-llm.ts';
import type { OllamaModelLibrary } from './ollama-model-library.ts';

const defaultModel = 'fake:latest';

const modelDetails = {
  parent_model: '',
  format: 'gguf',
  family: 'llama',
  families: ['llama'],
  parameter_size: '1B',
  quantization_level: 'Q4_0',
};

function ollamaArguments(call: ScriptedToolCall): unknown {
  if (typeof call.arguments !== 'string') return call.arguments;
  try {
    return JSON.parse(call.arguments);
  } catch {
    return call.arguments;
  }
}

function doneFields(exchange: ChatExchange, generatedLength: number, startedAt: bigint): Record<string, unknown> {
  const usage = usageOf(exchange.step, exchange.request, generatedLength);
  const totalDuration = Number(process.hrtime.bigint() - startedAt);
  return {
    done: true,
    done_reason: 'stop',
    total_duration: totalDuration,
    load_duration: 1_000_000,
    prompt_eval_count: usage.promptTokens,
    prompt_eval_duration: Math.floor(totalDuration / 4),
    eval_count: usage.completionTokens,
    eval_duration: Math.floor(totalDuration / 2),
  };
}

async function reply(exchange: ChatExchange): Promise<void> {
  const { request, step, response, stream } = exchange;
  const startedAt = process.hrtime.bigint();
  const model = typeof request.body?.model === 'string' ? request.body.model : defaultModel;
  const toolCalls = (step.toolCalls ?? []).map((call) => ({
    function: { name: call.name, arguments: ollamaArguments(call) },
  }));
  const envelope = (message: Record<string, unknown>): Record<string, unknown> => ({
    model,
    created_at: new Date().toISOString(),
    message: { role: 'assistant', content: '', ...message },
  });

  if (request.body?.stream === false) {
    if (step.delayMs) await sleep(step.delayMs);
    if (step.hang) return stream.hang();
    const content = fullContent(step);
    const thinking = step.thinking ?? '';
    const message = {
      content,
      ...(thinking ? { thinking } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    const generated = content.length + thinking.length;
    return sendJson(response, 200, { ...envelope(message), ...doneFields(exchange, generated, startedAt) });
  }

  response.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
  response.flushHeaders();
  const line = (message: Record<string, unknown>): string => JSON.stringify({ ...envelope(message), done: false }) + '\n';
  let generated = 0;
  for (const piece of splitText(step.thinking ?? '', chunkSizeOf(step))) {
    generated += piece.length;
    if (!(await stream.send(line({ thinking: piece })))) return;
  }
  const contentLength = await sendContent(stream, step, (piece) => line({ content: piece }));
  if (contentLength === undefined) return;
  generated += contentLength;
  if (toolCalls.length > 0 && !(await stream.send(line({ tool_calls: toolCalls })))) return;
  if (step.hang) return stream.hang();
  stream.end(JSON.stringify({ ...envelope({}), ...doneFields(exchange, generated, startedAt) }) + '\n');
}

/** `listed`: models /api/tags names besides fake:latest and every model asked for so far. */
function serveOther(method: string, path: string, response: ServerResponse, requests: RecordedRequest[], listed: string[] = []): boolean {
  if (method === 'GET' && path === '/') {
    response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    response.end('Ollama is running');
    return true;
  }
  if (method === 'GET' && path === '/api/version') {
    sendJson(response, 200, { version: '0.12.0' });
    return true;
  }
  if (method === 'GET' && path === '/api/tags') {
    const names = new Set([defaultModel, ...listed]);
    for (const request of requests) if (typeof request.body?.model === 'string') names.add(request.body.model);
    const models = [...names].map((name) => ({
      name,
      model: name,
      modified_at: new Date(0).toISOString(),
      size: 1_000_000_000,
      digest: '0'.repeat(64),
      details: modelDetails,
    }));
    sendJson(response, 200, { models });
    return true;
  }
  if (method === 'GET' && path === '/api/ps') {
    sendJson(response, 200, { models: [] });
    return true;
  }
  if (method === 'POST' && path === '/api/show') {
    sendJson(response, 200, {
      details: modelDetails,
      model_info: { 'general.architecture': 'llama', 'llama.context_length': 8192 },
      capabilities: ['completion', 'tools', 'thinking'],
    });
    return true;
  }
  return false;
}

export interface ScriptedOllamaOptions extends ServerOptions {
  /** Models /api/tags lists from the start (it also lists every model asked for). */
  models?: string[];
  /** The models Ollama has and can pull: then it, not `models`, answers the model endpoints (/api/tags, /api/show, /api/ps, /api/pull, /api/delete, an empty /api/generate). */
  library?: OllamaModelLibrary;
}

/** Ollama's /api/embed takes one text or a list of them. */
function embedInput(body: any): string[] | string {
  const input: unknown = body?.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((text) => typeof text === 'string')) return input;
  return 'input must be a string or a list of strings';
}

function sendEmbeddings(response: ServerResponse, request: RecordedRequest, vectors: number[][]): void {
  const input = embedInput(request.body);
  sendJson(response, 200, {
    model: request.body?.model ?? defaultModel,
    embeddings: vectors,
    total_duration: 1_000_000,
    load_duration: 0,
    prompt_eval_count: Array.isArray(input) ? input.reduce((sum, text) => sum + estimateTokens(text), 0) : 0,
  });
}

export function startScriptedOllama(options?: ScriptedOllamaOptions): Promise<ScriptedLlm> {
  return startScriptedServer(
    {
      urlPath: '',
      chatPath: '/api/chat',
      embedPath: '/api/embed',
      embedInput,
      sendEmbeddings,
      serveOther: (method, path, response, requests, incoming: IncomingMessage) =>
        options?.library?.serve(method, path, incoming, response) || serveOther(method, path, response, requests, options?.models),
      sendError: (response, status, message) => sendJson(response, status, { error: message }),
      reply,
    },
    options,
  );
}
