import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventListener } from '../../src/agent/run-hub.ts';
import type { AgentEvent } from '../../src/protocol/events.ts';
import { defaultKeepAliveMs, streamAnswer } from '../../src/server/openai-compatible/chat-answers.ts';

// The SSE answer of the OpenAI front door (issue 37) on a bare Fastify on port 0, over a run played
// by the test: the chunks as the run's events come, a comment line while nothing comes, [DONE] at
// the end, and Stop when the client goes away.

const identity = { id: 'chatcmpl-1', model: 'hearth/secretary', created: 1_700_000_000 };

interface PlayedRun {
  emit(event: AgentEvent): void;
  stopped: string[];
  followers(): number;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  const closing = app;
  app = undefined;
  // After an abort, the client opens a fresh connection it never uses, which would hold the close.
  closing?.server.closeAllConnections();
  await closing?.close();
});

async function serve(keepAliveMs: number): Promise<{ url: string; run: PlayedRun }> {
  const listeners = new Set<EventListener>();
  const stopped: string[] = [];
  const sessions = {
    follow: (_sessionId: string, listener: EventListener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop: (sessionId: string) => {
      stopped.push(sessionId);
      return true;
    },
  };
  app = Fastify();
  app.get('/stream', (_request, reply) => streamAnswer({ reply, sessions, sessionId: 'session-1', identity, keepAliveMs }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/stream`,
    run: { emit: (event) => listeners.forEach((listener) => listener(event)), stopped, followers: () => listeners.size },
  };
}

/** Reads the response until its text so far contains `until`. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: string, soFar = ''): Promise<string> {
  const decoder = new TextDecoder();
  let text = soFar;
  while (!text.includes(until)) {
    const read = await reader.read();
    if (read.done) throw new Error(`ended before ${JSON.stringify(until)}: ${text}`);
    text += decoder.decode(read.value, { stream: true });
  }
  return text;
}

describe('streamAnswer', () => {
  it('keeps a quiet stream alive with a comment line, sends each event as a chunk, and ends with stop and [DONE]', async () => {
    const { url, run } = await serve(20);
    const response = await fetch(url);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    const opened = await readUntil(reader, ': still working\n\n');
    const [first] = opened.split('\n\n');
    expect(JSON.parse(first!.slice('data: '.length))).toEqual({ ...identity, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });

    run.emit({ type: 'stream_delta', delta: 'Hello' });
    run.emit({ type: 'stream_end', content: 'Hello', length: 5, context_tokens: 1, max_context_tokens: 2 });
    const text = await readUntil(reader, 'data: [DONE]\n\n', opened);
    const chunks = text
      .split('\n\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice('data: '.length)));
    expect(chunks.map((chunk) => [chunk.choices[0].delta, chunk.choices[0].finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hello' }, null],
      [{}, 'stop'],
    ]);
    expect((await reader.read()).done).toBe(true);
    expect(run.followers()).toBe(0);
    expect(run.stopped).toEqual([]);
  });

  it('stops the run when the client goes away before its end', async () => {
    const { url, run } = await serve(defaultKeepAliveMs);
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    const reader = response.body!.getReader();
    run.emit({ type: 'stream_delta', delta: 'Part' });
    await readUntil(reader, '"content":"Part"');
    controller.abort();
    await expect.poll(() => run.stopped).toEqual(['session-1']);
    expect(run.followers()).toBe(0);
  });

  it('waits 15 seconds between comment lines by default', () => {
    expect(defaultKeepAliveMs).toBe(15_000);
  });
});
