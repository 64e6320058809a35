import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIBackend } from '../src/llm/openai.ts';
import type { ChatRequest, LlmBackend } from '../src/llm/types.ts';
import { startScriptedOpenAI } from './support/scripted-openai.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { chatRequest as baseChatRequest, completeAbortedBeforeHeaders, expectCompleteGathersReply, joined, readAbortingAtFirstText, readAll, toolCallsOf, unusedPort } from './support/llm-helpers.ts';

let server: ScriptedLlm;
let backend: LlmBackend;

beforeAll(async () => {
  server = await startScriptedOpenAI();
  backend = createOpenAIBackend({ baseUrl: server.url, apiKey: '', defaultModel: 'fake', stallTimeoutMs: 60_000 });
});

afterAll(() => server.close());

const chatRequest = (overrides: Partial<ChatRequest> = {}) => baseChatRequest('fake', overrides);

describe('OpenAI-compatible backend', () => {
  it('streams text in several deltas and ends with done and usage', async () => {
    server.script({ content: 'Hello there, friend.', chunkSize: 5, usage: { promptTokens: 9, completionTokens: 5 } });
    const events = await readAll(backend.stream(chatRequest()));
    expect(events.filter((event) => event.type === 'text_delta').length).toBe(4);
    expect(joined(events, 'text_delta')).toBe('Hello there, friend.');
    expect(events.at(-1)).toEqual({ type: 'done', usage: { promptTokens: 9, completionTokens: 5 } });
    expect(events.filter((event) => event.type === 'done' || event.type === 'error')).toHaveLength(1);
  });

  it('streams reasoning_content as thinking', async () => {
    server.script({ thinking: 'Let me think.', content: 'Answer.' });
    const events = await readAll(backend.stream(chatRequest()));
    expect(joined(events, 'thinking_delta')).toBe('Let me think.');
    expect(joined(events, 'text_delta')).toBe('Answer.');
  });

  it('splits <think> tags out of the content', async () => {
    server.script({ thinking: 'Inline reasoning.', thinkTags: true, content: 'Answer.' });
    const events = await readAll(backend.stream(chatRequest()));
    expect(joined(events, 'thinking_delta')).toBe('Inline reasoning.');
    expect(joined(events, 'text_delta')).toBe('Answer.');
  });

  it('splits <think> tags cut across chunks', async () => {
    server.script({ chunks: ['<thi', 'nk>Rea', 'soning</th', 'ink>\n', '\nAns', 'wer <b>'] });
    const events = await readAll(backend.stream(chatRequest()));
    expect(joined(events, 'thinking_delta')).toBe('Reasoning');
    expect(joined(events, 'text_delta')).toBe('Answer <b>');
  });

  it('assembles several tool calls from their fragments', async () => {
    server.script({
      chunkSize: 4,
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Oslo', days: 3 } },
        { name: 'search', arguments: { query: 'ferry times', limit: 5 } },
      ],
    });
    const events = await readAll(backend.stream(chatRequest()));
    const serverIds = expect.stringMatching(/^call_\d+_\d$/);
    expect(toolCallsOf(events)).toEqual([
      { id: serverIds, name: 'get_weather', arguments: { city: 'Oslo', days: 3 } },
      { id: serverIds, name: 'search', arguments: { query: 'ferry times', limit: 5 } },
    ]);
    expect(new Set(toolCallsOf(events).map((call) => call.id)).size).toBe(2);
    expect(events.at(-1)?.type).toBe('done');
  });

  it('keeps the raw text of invalid tool arguments', async () => {
    server.script({ toolCalls: [{ name: 'broken', arguments: '{"city": Oslo' }, { name: 'list', arguments: '[1, 2]' }] });
    const events = await readAll(backend.stream(chatRequest()));
    expect(toolCallsOf(events)).toEqual([
      { id: expect.any(String), name: 'broken', arguments: {}, invalid_arguments: '{"city": Oslo' },
      { id: expect.any(String), name: 'list', arguments: {}, invalid_arguments: '[1, 2]' },
    ]);
  });

  it('sends messages, tools, temperature, stream_options and response_format in OpenAI shape', async () => {
    server.script({ content: 'ok' });
    const schema = { type: 'object', properties: { title: { type: 'string' } } };
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB';
    const jpeg = '/9j/4AAQSkZJRgABAQAAAQABAAD';
    await readAll(
      backend.stream(
        chatRequest({
          model: 'llama-3.1-8b',
          think: true,
          temperature: 0.3,
          responseSchema: schema,
          tools: [{ name: 'get_weather', description: 'Weather for a city.', parameters: { type: 'object', properties: {} } }],
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'What are these?', images: [png, jpeg] },
            { role: 'assistant', content: '', thinking: 'Hmm.', tool_calls: [{ id: 'call_7', name: 'get_weather', arguments: { city: 'Oslo' } }] },
            { role: 'tool', content: 'Sunny', tool_call_id: 'call_7', name: 'get_weather' },
          ],
        }),
      ),
    );
    const request = server.requests.at(-1);
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers['authorization']).toBe('Bearer not-needed');
    const body = request?.body;
    expect(body).toMatchObject({
      model: 'llama-3.1-8b',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.3,
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema, strict: true } },
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city.', parameters: { type: 'object', properties: {} } } }],
    });
    expect(body).not.toHaveProperty('think');
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What are these?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg}` } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_7', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_7', content: 'Sunny' },
    ]);
  });

  it('streams a large image into the body in slices, byte for byte, with a matching Content-Length', async () => {
    server.script({ content: 'A big picture.' });
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(3 * 1024 * 1024, 9)]).toString('base64');
    const events = await readAll(backend.stream(chatRequest({ messages: [{ role: 'user', content: 'Look', images: [png] }] })));
    expect(joined(events, 'text_delta')).toBe('A big picture.');
    const request = server.requests.at(-1)!;
    expect(request.body.messages[0].content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } });
    expect(Number(request.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(request.body)));
  });

  it('refuses to stream an image that is not base64 rather than send broken JSON', async () => {
    const requestsBefore = server.requests.length;
    const events = await readAll(backend.stream(chatRequest({ messages: [{ role: 'user', content: 'Look', images: [`${'A'.repeat(100_000)}","role":"system`] }] })));
    expect(events.at(-1)).toEqual({ type: 'error', error: { code: 'llm_error', message: expect.stringContaining('not valid base64') } });
    expect(server.requests).toHaveLength(requestsBefore);
  });

  it('leaves out temperature, tools and response_format when the request does not set them', async () => {
    server.script({ content: 'ok' });
    await readAll(backend.stream(chatRequest()));
    const body = server.requests.at(-1)?.body;
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('response_format');
  });

  it('complete() gathers text, thinking, tool calls and usage', () => expectCompleteGathersReply(server, () => backend.complete(chatRequest())));

  it('cancels the HTTP request mid-stream and ends with aborted', async () => {
    server.script({ content: 'partial answer', hang: true, toolCalls: [{ name: 'never', arguments: {} }] });
    const events = await readAbortingAtFirstText((signal) => backend.stream(chatRequest({ signal })));
    expect(events).toEqual([
      { type: 'text_delta', delta: expect.any(String) },
      { type: 'error', error: { code: 'aborted', message: expect.any(String) } },
    ]);
    const disconnected = await server.waitForDisconnect();
    expect(disconnected.disconnected).toBe(true);
  });

  it('cancels a request still waiting for response headers', async () => {
    const result = await completeAbortedBeforeHeaders((origin, signal) =>
      createOpenAIBackend({ baseUrl: `${origin}/v1`, apiKey: '', defaultModel: 'fake', stallTimeoutMs: 60_000 }).complete(chatRequest({ signal })),
    );
    expect(result).toEqual({ ok: false, error: { code: 'aborted', message: expect.any(String) } });
  });

  it('explains an unreachable endpoint', async () => {
    const baseUrl = `http://127.0.0.1:${await unusedPort()}/v1`;
    const unreachable = createOpenAIBackend({ baseUrl, apiKey: '', defaultModel: 'fake', stallTimeoutMs: 60_000 });
    const result = await unreachable.complete(chatRequest());
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'llm_unreachable',
        message: `Cannot reach the OpenAI-compatible endpoint at ${baseUrl} (ECONNREFUSED). Check OPENAI_BASE_URL and that the server is running.`,
      },
    });
  });

  it('passes on HTTP errors with their status, message and a hint', async () => {
    server.script({ status: 401, errorMessage: 'Incorrect API key provided.' });
    const events = await readAll(backend.stream(chatRequest()));
    expect(events).toEqual([
      {
        type: 'error',
        error: {
          code: 'llm_error',
          message: `The OpenAI-compatible endpoint at ${server.url} returned 401: Incorrect API key provided. — check OPENAI_API_KEY.`,
        },
      },
    ]);
  });

  it('passes on server errors', async () => {
    server.script({ status: 500, errorMessage: 'CUDA out of memory' });
    const result = await backend.complete(chatRequest());
    expect(result).toEqual({
      ok: false,
      error: { code: 'llm_error', message: `The OpenAI-compatible endpoint at ${server.url} returned 500: CUDA out of memory` },
    });
  });
});
