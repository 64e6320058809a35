import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

describe('streamed chat', () => {
  it('streams thinking and answer, then persists both buffers', async () => {
    const hearth = await start();
    hearth.llm.script({ thinking: 'Let me think about tea.', content: 'Green tea is lovely.', chunkSize: 4, usage: { promptTokens: 120, completionTokens: 8 } });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    expect(await socket.next('session_sync')).toEqual({ type: 'session_sync', running: false });

    socket.send({ type: 'message', content: 'Tell me about tea' });
    await socket.next('stream_start');
    const end = await socket.next('stream_end');
    expect(end).toEqual({ type: 'stream_end', content: 'Green tea is lovely.', length: 20, context_tokens: 128, max_context_tokens: 32768 });
    const deltas = socket.ofType('stream_delta').map((event) => event.delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Green tea is lovely.');
    expect(socket.ofType('thinking_delta').map((event) => event.delta).join('')).toBe('Let me think about tea.');
    expect(socket.types().indexOf('thinking_end')).toBeLessThan(socket.types().indexOf('stream_delta'));

    const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
    expect(body.title).toBe('Tell me about tea');
    expect(body.messages.map((message: any) => [message.role, message.content])).toEqual([
      ['user', 'Tell me about tea'],
      ['assistant', 'Green tea is lovely.'],
    ]);
    expect(body.messages[1].thinking).toBe('Let me think about tea.');
    const request = hearth.llm.requests[0]!.body;
    expect(request.messages[0].role).toBe('system');
    expect(request.messages.at(-1)).toMatchObject({ role: 'user', content: 'Tell me about tea' });
    expect(request.tools.map((tool: any) => tool.function.name)).toEqual(expect.arrayContaining(['scratchpad', 'todo', 'filesystem', 'spawn_agent']));
    socket.close();
  });
});

describe('thinking through the OpenAI-compatible backend', () => {
  it('splits <think> tags out of the content into thinking events and the saved message', async () => {
    const hearth = await start({ backend: 'openai' });
    hearth.llm.script({ thinking: 'Weighing options.', thinkTags: true, content: 'Take the umbrella.', chunkSize: 3 });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Rain?' });
    const end = await socket.next('stream_end');
    expect(end.content).toBe('Take the umbrella.');
    expect(socket.ofType('thinking_delta').map((event) => event.delta).join('')).toBe('Weighing options.');
    expect(socket.ofType('stream_delta').map((event) => event.delta).join('')).not.toContain('<think>');
    const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
    expect(body.messages[1]).toMatchObject({ content: 'Take the umbrella.', thinking: 'Weighing options.' });
    expect(hearth.llm.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });
});
