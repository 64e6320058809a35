import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  argumentText,
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
  type ServerOptions,
} from './scripted-llm.ts';

const defaultModel = 'fake';

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
};

function sendError(response: ServerResponse, status: number, message: string): void {
  const type = errorTypes[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  sendJson(response, status, { error: { message, type, param: null, code: type === 'server_error' ? null : type } });
}

function usageBody(exchange: ChatExchange, generatedLength: number): Record<string, number> {
  const usage = usageOf(exchange.step, exchange.request, generatedLength);
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

async function reply(exchange: ChatExchange): Promise<void> {
  const { request, index, step, response, stream } = exchange;
  const model = typeof request.body?.model === 'string' ? request.body.model : defaultModel;
  const id = `chatcmpl-scripted${index + 1}`;
  const created = Math.floor(Date.now() / 1000);
  const toolCalls = (step.toolCalls ?? []).map((call, position) => ({
    id: `call_${index + 1}_${position}`,
    name: call.name,
    arguments: argumentText(call),
  }));
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  const thinking = step.thinking ?? '';

  if (request.body?.stream !== true) {
    if (step.delayMs) await sleep(step.delayMs);
    if (step.hang) return stream.hang();
    const answer = fullContent(step);
    const content = step.thinkTags && thinking ? `<think>${thinking}</think>${answer}` : answer;
    const message = {
      role: 'assistant',
      content: content === '' && toolCalls.length > 0 ? null : content,
      refusal: null,
      ...(thinking && !step.thinkTags ? { reasoning_content: thinking } : {}),
      ...(toolCalls.length > 0
        ? {
            tool_calls: toolCalls.map((call) => ({
              id: call.id,
              type: 'function',
              function: { name: call.name, arguments: call.arguments },
            })),
          }
        : {}),
    };
    const generated = thinking.length + answer.length + toolCalls.reduce((sum, call) => sum + call.arguments.length, 0);
    return sendJson(response, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      usage: usageBody(exchange, generated),
    });
  }

  response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  response.flushHeaders();
  const event = (body: Record<string, unknown>): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...body })}\n\n`;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    event({ choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const size = chunkSizeOf(step);
  let generated = 0;

  if (!(await stream.send(chunk({ role: 'assistant', content: '' })))) return;
  const thinkingPieces = splitText(thinking, size);
  const thinkingDeltas = step.thinkTags
    ? thinkingPieces.length > 0
      ? ['<think>', ...thinkingPieces, '</think>'].map((piece) => ({ content: piece }))
      : []
    : thinkingPieces.map((piece) => ({ reasoning_content: piece }));
  for (const delta of thinkingDeltas) {
    if (!(await stream.send(chunk(delta)))) return;
  }
  generated += thinking.length;
  const contentLength = await sendContent(stream, step, (piece) => chunk({ content: piece }));
  if (contentLength === undefined) return;
  generated += contentLength;
  for (const [position, call] of toolCalls.entries()) {
    const opening = { index: position, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
    if (!(await stream.send(chunk({ tool_calls: [opening] })))) return;
    for (const piece of splitText(call.arguments, size)) {
      generated += piece.length;
      if (!(await stream.send(chunk({ tool_calls: [{ index: position, function: { arguments: piece } }] })))) return;
    }
  }
  if (step.hang) return stream.hang();
  if (!(await stream.send(chunk({}, finishReason)))) return;
  if (request.body?.stream_options?.include_usage) {
    if (!(await stream.send(event({ choices: [], usage: usageBody(exchange, generated) })))) return;
  }
  stream.end('data: [DONE]\n\n');
}

function serveOther(method: string, path: string, response: ServerResponse, requests: RecordedRequest[], listed: readonly string[] = []): boolean {
  if (method !== 'GET' || path !== '/v1/models') return false;
  const names = new Set([defaultModel, ...listed]);
  for (const request of requests) if (typeof request.body?.model === 'string') names.add(request.body.model);
  const data = [...names].map((name) => ({ id: name, object: 'model', created: 0, owned_by: 'scripted' }));
  sendJson(response, 200, { object: 'list', data });
  return true;
}

export interface ScriptedOpenAIOptions extends ServerOptions {
  /** Models /v1/models lists from the start (it also lists every model asked for). */
  models?: string[];
}

/** /v1/embeddings takes one text or a list of them (token arrays, which it also allows, are not played). */
function embedInput(body: any): string[] | string {
  const input: unknown = body?.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((text) => typeof text === 'string')) return input;
  return "'input' must be a string or a non-empty list of strings";
}

/** Floats, or each vector's float32 bytes in base64 when the request asks for `encoding_format: base64` (as the client does by default). */
function sendEmbeddings(response: ServerResponse, request: RecordedRequest, vectors: number[][]): void {
  const base64 = request.body?.encoding_format === 'base64';
  const input = embedInput(request.body);
  const tokens = Array.isArray(input) ? input.reduce((sum, text) => sum + estimateTokens(text), 0) : 0;
  sendJson(response, 200, {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
    })),
    model: request.body?.model ?? defaultModel,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

export function startScriptedOpenAI(options?: ScriptedOpenAIOptions): Promise<ScriptedLlm> {
  return startScriptedServer(
    {
      urlPath: '/v1',
      chatPath: '/v1/chat/completions',
      embedPath: '/v1/embeddings',
      embedInput,
      sendEmbeddings,
      serveOther: (method, path, response, requests) => serveOther(method, path, response, requests, options?.models),
      sendError,
      reply,
    },
    options,
  );
}
