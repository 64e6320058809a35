import { Ollama, type ChatResponse } from 'ollama';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { startScriptedOpenAI } from './support/scripted-openai.ts';

const servers: ScriptedLlm[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function ollamaServer(): Promise<{ server: ScriptedLlm; client: Ollama }> {
  const server = await startScriptedOllama();
  servers.push(server);
  return { server, client: new Ollama({ host: server.url }) };
}

async function openaiServer(): Promise<{ server: ScriptedLlm; client: OpenAI }> {
  const server = await startScriptedOpenAI();
  servers.push(server);
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 }) };
}

const user = [{ role: 'user' as const, content: 'hello there' }];
const tool = { type: 'function' as const, function: { name: 'todo', description: 'todo list', parameters: {} } };

async function collectOllama(client: Ollama): Promise<ChatResponse[]> {
  const parts: ChatResponse[] = [];
  for await (const part of await client.chat({ model: 'm', messages: user, stream: true })) parts.push(part);
  return parts;
}

async function collectOpenAI(client: OpenAI, extra: Record<string, unknown> = {}): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  const stream = await client.chat.completions.create({ model: 'm', messages: user, stream: true, ...extra });
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('scripted Ollama', () => {
  it('streams thinking, then content chunks, then tool calls, and ends with usage', async () => {
    const { server, client } = await ollamaServer();
    server.script({
      thinking: 'let me think',
      content: 'Hello, scripted world!',
      chunkSize: 5,
      toolCalls: [
        { name: 'todo', arguments: { action: 'set', items: ['a'] } },
        { name: 'todo', arguments: '{"action":"clear"}' },
        { name: 'todo', arguments: '{broken' },
      ],
      usage: { promptTokens: 42, completionTokens: 7 },
    });
    const parts = await collectOllama(client);
    const thinking = parts.map((part) => part.message.thinking ?? '').filter(Boolean);
    const content = parts.map((part) => part.message.content).filter(Boolean);
    expect(thinking).toEqual(['let m', 'e thi', 'nk']);
    expect(content).toEqual(['Hello', ', scr', 'ipted', ' worl', 'd!']);
    expect(parts.findIndex((part) => part.message.content)).toBeGreaterThan(parts.findIndex((part) => part.message.thinking));
    const calls = parts.flatMap((part) => part.message.tool_calls ?? []);
    expect(calls.map((call) => call.function.arguments as unknown)).toEqual([
      { action: 'set', items: ['a'] },
      { action: 'clear' },
      '{broken',
    ]);
    const last = parts.at(-1)!;
    expect(last).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: 42, eval_count: 7 });
    expect(server.requests[0]).toMatchObject({ path: '/api/chat', completed: true, disconnected: false });
    expect(server.requests[0]!.body).toMatchObject({ model: 'm', messages: user, stream: true });
  });

  it('answers a non-streaming request with the whole message', async () => {
    const { server, client } = await ollamaServer();
    server.script({ thinking: 'hmm', chunks: ['one ', 'two'], toolCalls: [{ name: 'todo', arguments: { x: 1 } }] });
    const reply = await client.chat({ model: 'm', messages: user, tools: [tool], stream: false });
    expect(reply.message).toMatchObject({ role: 'assistant', content: 'one two', thinking: 'hmm' });
    expect(reply.message.tool_calls).toEqual([{ function: { name: 'todo', arguments: { x: 1 } } }]);
    expect(reply.done).toBe(true);
    expect(reply.eval_count).toBeGreaterThan(0);
    expect(server.requests[0]!.body.tools).toEqual([tool]);
  });

  it('replies with HTTP errors in Ollama format', async () => {
    const { client, server } = await ollamaServer();
    server.script({ status: 404, errorMessage: 'model "m" not found' });
    await expect(collectOllama(client)).rejects.toMatchObject({ status_code: 404, error: 'model "m" not found' });
  });

  it('records an aborted stream as a disconnect', async () => {
    const { server, client } = await ollamaServer();
    server.script({ content: 'partial', hang: true });
    const stream = await client.chat({ model: 'm', messages: user, stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.message.content).toBe('partial');
    stream.abort();
    await expect(iterator.next()).rejects.toThrow(/abort/i);
    const request = await server.waitForDisconnect();
    expect(request).toMatchObject({ disconnected: true, completed: false });
  });

  it('ends hanging responses on close without calling them disconnects', async () => {
    const { server, client } = await ollamaServer();
    server.script({ chunks: ['still here'], hang: true });
    const stream = await client.chat({ model: 'm', messages: user, stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.message.content).toBe('still here');
    await server.close();
    await expect(iterator.next()).rejects.toThrow();
    expect(server.requests[0]).toMatchObject({ disconnected: false, completed: false });
  });

  it('generates lazy chunks at sending time, in order, through backpressure', async () => {
    const { server, client } = await ollamaServer();
    const calls: number[] = [];
    const padding = 'x'.repeat(1000);
    let chunkEvents = 0;
    server.on('chunk', () => chunkEvents++);
    server.script({
      chunkCount: 3000,
      chunkText: (index) => {
        calls.push(index);
        return `${index}:${padding}|`;
      },
    });
    const parts = await collectOllama(client);
    const indices = parts.filter((part) => !part.done).map((part) => Number(part.message.content.split(':')[0]));
    expect(indices).toEqual([...Array(3000).keys()]);
    expect(calls).toEqual(indices);
    expect(chunkEvents).toBe(3000);
  });

  it('stops generating chunks while a slow client is not reading', async () => {
    const { server, client } = await ollamaServer();
    const block = 'y'.repeat(64 * 1024);
    let generated = 0;
    let largestLead = 0;
    server.script({ chunkCount: 1000, chunkText: () => (generated++, block) });
    let received = 0;
    for await (const part of await client.chat({ model: 'm', messages: user, stream: true })) {
      if (part.done) break;
      received++;
      largestLead = Math.max(largestLead, generated - received);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(received).toBe(1000);
    expect(largestLead).toBeLessThan(400);
  });

  it('uses the script queue first, then the responder, and lists models', async () => {
    const { server, client } = await ollamaServer();
    expect((await client.chat({ model: 'm', messages: user })).message.content).toBe('ok');
    server.script({ content: 'first' });
    server.respondWith((request, index) => ({ content: `${index}:${request.body.messages[0].content}` }));
    const replies = [];
    for (let turn = 0; turn < 3; turn++) replies.push((await client.chat({ model: 'm', messages: user })).message.content);
    expect(replies).toEqual(['first', '2:hello there', '3:hello there']);
    expect((await server.waitForRequest(4)).body.messages).toEqual(user);
    const models = await client.list();
    expect(models.models.map((model) => model.name)).toEqual(['fake:latest', 'm']);
    expect((await client.version()).version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(server.requests).toHaveLength(4);
  });

  it('breaks the connection when told to destroy it', async () => {
    const { server, client } = await ollamaServer();
    server.script({ destroy: true });
    const pending = server.waitForRequest(1);
    await expect(collectOllama(client)).rejects.toThrow();
    expect(await pending).toMatchObject({ disconnected: false, completed: false });
  });
});

describe('scripted OpenAI', () => {
  it('streams role, reasoning, content and usage', async () => {
    const { server, client } = await openaiServer();
    server.script({ thinking: 'pondering', content: 'The answer is 42.', usage: { promptTokens: 9, completionTokens: 5 } });
    const chunks = await collectOpenAI(client, { stream_options: { include_usage: true } });
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta as Record<string, unknown>));
    expect(deltas[0]).toMatchObject({ role: 'assistant' });
    expect(deltas.map((delta) => delta.reasoning_content ?? '').join('')).toBe('pondering');
    expect(deltas.map((delta) => delta.content ?? '').join('')).toBe('The answer is 42.');
    expect(deltas.filter((delta) => delta.content).length).toBe(3);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } });
    expect(server.requests[0]).toMatchObject({ path: '/v1/chat/completions', completed: true });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer test');
  });

  it('puts thinking inside think tags on request and sends no usage unless asked', async () => {
    const { server, client } = await openaiServer();
    server.script({ thinking: 'quietly', thinkTags: true, content: 'done' });
    const chunks = await collectOpenAI(client);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('<think>quietly</think>done');
    expect(chunks.every((chunk) => chunk.usage === undefined && chunk.choices.length === 1)).toBe(true);
  });

  it('streams tool calls as argument pieces the client must assemble', async () => {
    const { server, client } = await openaiServer();
    const items = { action: 'set', items: ['buy milk', 'call mum'] };
    server.script({ toolCalls: [{ name: 'todo', arguments: items }, { name: 'scratchpad', arguments: '{"oops' }] });
    const chunks = await collectOpenAI(client, { tools: [tool] });
    const assembled: { id?: string; name?: string; arguments: string; pieces: number }[] = [];
    for (const call of chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])) {
      const entry = (assembled[call.index] ??= { arguments: '', pieces: 0 });
      if (call.id) entry.id = call.id;
      if (call.function?.name) entry.name = call.function.name;
      if (call.function?.arguments) {
        entry.arguments += call.function.arguments;
        entry.pieces++;
      }
    }
    expect(assembled.map(({ name, arguments: text }) => ({ name, text }))).toEqual([
      { name: 'todo', text: JSON.stringify(items) },
      { name: 'scratchpad', text: '{"oops' },
    ]);
    expect(assembled[0]!.pieces).toBeGreaterThan(3);
    expect(assembled[0]!.id).not.toBe(assembled[1]!.id);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('answers non-streaming requests with a chat.completion', async () => {
    const { server, client } = await openaiServer();
    server.script({ thinking: 'mull', content: 'sure', toolCalls: [{ name: 'todo', arguments: { a: 1 } }] });
    const completion = await client.chat.completions.create({ model: 'm', messages: user });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message).toMatchObject({ role: 'assistant', content: 'sure', reasoning_content: 'mull' });
    expect(choice.message.tool_calls).toMatchObject([{ type: 'function', function: { name: 'todo', arguments: '{"a":1}' } }]);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
  });

  it('replies with HTTP errors in OpenAI format', async () => {
    const { server, client } = await openaiServer();
    server.script({ status: 429, errorMessage: 'slow down' });
    const failure = await collectOpenAI(client).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect(failure).toMatchObject({ status: 429, message: '429 slow down', type: 'rate_limit_error' });
  });

  it('records an aborted stream as a disconnect', async () => {
    const { server, client } = await openaiServer();
    server.script({ chunks: ['a', 'b'], hang: true });
    const controller = new AbortController();
    const disconnected: string[] = [];
    server.on('disconnect', (request) => disconnected.push(request.path));
    const stream = await client.chat.completions.create(
      { model: 'm', messages: user, stream: true },
      { signal: controller.signal },
    );
    let received = '';
    for await (const chunk of stream) {
      received += chunk.choices[0]?.delta.content ?? '';
      if (received === 'ab') controller.abort();
    }
    expect(received).toBe('ab');
    expect(await server.waitForDisconnect()).toMatchObject({ disconnected: true, completed: false });
    expect(disconnected).toEqual(['/v1/chat/completions']);
  });

  it('lists models', async () => {
    const { client } = await openaiServer();
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['fake']);
  });
});
