import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOllamaBackend } from '../src/llm/ollama.ts';
import type { ChatRequest, LlmBackend } from '../src/llm/types.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { chatRequest as baseChatRequest, completeAbortedBeforeHeaders, expectCompleteGathersReply, joined, readAbortingAtFirstText, readAll, unusedPort } from './support/llm-helpers.ts';

let server: ScriptedLlm;
let backend: LlmBackend;

beforeAll(async () => {
  server = await startScriptedOllama();
  backend = createOllamaBackend({ host: server.url, defaultModel: 'fake:latest', stallTimeoutMs: 60_000 });
});

afterAll(() => server.close());

const chatRequest = (overrides: Partial<ChatRequest> = {}) => baseChatRequest('fake:latest', overrides);

describe('Ollama backend', () => {
  it('streams text in several deltas and ends with done and usage', async () => {
    server.script({ content: 'Hello there, friend.', chunkSize: 5, usage: { promptTokens: 12, completionTokens: 4 } });
    const events = await readAll(backend.stream(chatRequest()));
    expect(events.filter((event) => event.type === 'text_delta').length).toBe(4);
    expect(joined(events, 'text_delta')).toBe('Hello there, friend.');
    expect(events.at(-1)).toEqual({ type: 'done', usage: { promptTokens: 12, completionTokens: 4 } });
    expect(events.filter((event) => event.type === 'done' || event.type === 'error')).toHaveLength(1);
  });

  it('streams thinking from message.thinking before the answer', async () => {
    server.script({ thinking: 'Let me think.', content: 'Answer.' });
    const events = await readAll(backend.stream(chatRequest({ think: true })));
    expect(joined(events, 'thinking_delta')).toBe('Let me think.');
    expect(joined(events, 'text_delta')).toBe('Answer.');
    const firstText = events.findIndex((event) => event.type === 'text_delta');
    const lastThinking = events.findLastIndex((event) => event.type === 'thinking_delta');
    expect(lastThinking).toBeLessThan(firstText);
  });

  it('gives tool calls ids unique within the stream and keeps invalid argument text', async () => {
    server.script({
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Oslo' } },
        { name: 'get_weather', arguments: { city: 'Bergen' } },
        { name: 'broken', arguments: '{"city": Oslo' },
      ],
    });
    const events = await readAll(backend.stream(chatRequest()));
    const calls = events.flatMap((event) => (event.type === 'tool_call' ? [event.call] : []));
    expect(calls).toEqual([
      { id: expect.any(String), name: 'get_weather', arguments: { city: 'Oslo' } },
      { id: expect.any(String), name: 'get_weather', arguments: { city: 'Bergen' } },
      { id: expect.any(String), name: 'broken', arguments: {}, invalid_arguments: '{"city": Oslo' },
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(3);
    expect(events.at(-1)?.type).toBe('done');
  });

  it('sends messages, tools, think, options and format in Ollama shape', async () => {
    server.script({ content: 'ok' });
    const schema = { type: 'object', properties: { title: { type: 'string' } } };
    await readAll(
      backend.stream(
        chatRequest({
          model: 'qwen3:8b',
          think: false,
          temperature: 0.2,
          contextWindow: 16384,
          responseSchema: schema,
          tools: [{ name: 'get_weather', description: 'Weather for a city.', parameters: { type: 'object', properties: {} } }],
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'What is this?', images: ['iVBORw0KGgo='] },
            {
              role: 'assistant',
              content: '',
              thinking: 'Check the weather.',
              tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }],
            },
            { role: 'tool', content: 'Sunny', tool_call_id: 'call_1', name: 'get_weather' },
          ],
        }),
      ),
    );
    const body = server.requests.at(-1)?.body;
    expect(body).toMatchObject({
      model: 'qwen3:8b',
      stream: true,
      think: false,
      format: schema,
      options: { num_ctx: 16384, temperature: 0.2 },
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city.', parameters: { type: 'object', properties: {} } } }],
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is this?', images: ['iVBORw0KGgo='] },
      {
        role: 'assistant',
        content: '',
        thinking: 'Check the weather.',
        tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }],
      },
      { role: 'tool', content: 'Sunny', tool_name: 'get_weather' },
    ]);
  });

  it('streams large images into the body in slices, byte for byte, with a matching Content-Length', async () => {
    server.script({ content: 'Two big pictures.' });
    const first = Buffer.alloc(3 * 1024 * 1024 + 1, 9).toString('base64');
    const second = Buffer.alloc(200_000, 4).toString('base64');
    const events = await readAll(backend.stream(chatRequest({ messages: [{ role: 'user', content: 'Look "here"', images: [first, second] }] })));
    expect(joined(events, 'text_delta')).toBe('Two big pictures.');
    const request = server.requests.at(-1)!;
    expect(request.body.messages[0]).toMatchObject({ content: 'Look "here"', images: [first, second] });
    expect(Number(request.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(request.body)));
  });

  it('refuses to stream an image that is not base64 rather than send broken JSON', async () => {
    const requestsBefore = server.requests.length;
    const events = await readAll(backend.stream(chatRequest({ messages: [{ role: 'user', content: 'Look', images: [`${'A'.repeat(100_000)}"],"x":["`] }] })));
    expect(events.at(-1)).toEqual({ type: 'error', error: { code: 'llm_error', message: expect.stringContaining('not valid base64') } });
    expect(server.requests).toHaveLength(requestsBefore);
  });

  it('leaves out think, tools and format when the request does not set them', async () => {
    server.script({ content: 'ok' });
    await readAll(backend.stream(chatRequest()));
    const body = server.requests.at(-1)?.body;
    expect(body).not.toHaveProperty('think');
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('format');
  });

  it('retries without think for a model that cannot reason, and remembers it', async () => {
    const plain = createOllamaBackend({ host: server.url, defaultModel: 'plain:latest', stallTimeoutMs: 60_000 });
    const before = server.requests.length;
    server.script({ status: 400, errorMessage: '"plain:latest" does not support thinking' }, { content: 'Fine.' }, { content: 'Again.' });
    const request = () => chatRequest({ model: 'plain:latest', think: true });
    expect(joined(await readAll(plain.stream(request())), 'text_delta')).toBe('Fine.');
    expect(joined(await readAll(plain.stream(request())), 'text_delta')).toBe('Again.');
    const sent = server.requests.slice(before).map((recorded) => recorded.body.think);
    expect(sent).toEqual([true, undefined, undefined]);
  });

  it('complete() gathers text, thinking, tool calls and usage', () => expectCompleteGathersReply(server, () => backend.complete(chatRequest())));

  it('cancels the HTTP request mid-stream and ends with aborted', async () => {
    server.script({ content: 'partial answer', hang: true });
    const events = await readAbortingAtFirstText((signal) => backend.stream(chatRequest({ signal })));
    expect(events.at(-1)).toEqual({ type: 'error', error: { code: 'aborted', message: expect.any(String) } });
    expect(events.filter((event) => event.type === 'text_delta')).toHaveLength(1);
    const disconnected = await server.waitForDisconnect();
    expect(disconnected.disconnected).toBe(true);
  });

  it('cancels a request still waiting for response headers', async () => {
    const result = await completeAbortedBeforeHeaders((origin, signal) =>
      createOllamaBackend({ host: origin, defaultModel: 'fake', stallTimeoutMs: 60_000 }).complete(chatRequest({ signal })),
    );
    expect(result).toEqual({ ok: false, error: { code: 'aborted', message: expect.any(String) } });
  });

  it('ends with aborted at once when the signal is already aborted', async () => {
    const before = server.requests.length;
    const events = await readAll(backend.stream(chatRequest({ signal: AbortSignal.abort() })));
    expect(events).toEqual([{ type: 'error', error: { code: 'aborted', message: expect.any(String) } }]);
    expect(server.requests.length).toBe(before);
  });

  it('explains an unreachable server', async () => {
    const host = `http://127.0.0.1:${await unusedPort()}`;
    const unreachable = createOllamaBackend({ host, defaultModel: 'fake', stallTimeoutMs: 60_000 });
    const events = await readAll(unreachable.stream(chatRequest()));
    expect(events).toEqual([
      {
        type: 'error',
        error: {
          code: 'llm_unreachable',
          message: `Cannot reach Ollama at ${host} (ECONNREFUSED). Is \`ollama serve\` running? Check OLLAMA_HOST.`,
        },
      },
    ]);
  });

  it('explains a missing model', async () => {
    server.script({ status: 404, errorMessage: 'model "qwen9:1b" not found, try pulling it first' });
    const result = await backend.complete(chatRequest({ model: 'qwen9:1b' }));
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'llm_error',
        message: 'Ollama returned 404: model "qwen9:1b" not found — pull it with `ollama pull qwen9:1b` or set OLLAMA_DEFAULT_MODEL.',
      },
    });
  });

  it('passes on other HTTP errors with their status and message', async () => {
    server.script({ status: 500, errorMessage: 'model requires more system memory than is available' });
    const events = await readAll(backend.stream(chatRequest()));
    expect(events).toEqual([
      { type: 'error', error: { code: 'llm_error', message: 'Ollama returned 500: model requires more system memory than is available' } },
    ]);
  });

  it('reports a connection that breaks before a reply as unreachable', async () => {
    server.script({ destroy: true });
    const result = await backend.complete(chatRequest());
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('llm_unreachable');
  });
});
