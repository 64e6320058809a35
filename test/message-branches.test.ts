import { describe, expect, it } from 'vitest';
import { type Hearth, useHearth } from './support/hearth-server.ts';

const startApp = useHearth();


async function start(backend: 'ollama' | 'openai' = 'ollama'): Promise<Hearth> {
  const hearth = await startApp({ backend });
  return hearth;
}

/** The text of every message the scripted LLM was sent in its last request, system prompt left out. */
function lastConversation(server: Hearth): string[] {
  const messages: { role: string; content: unknown }[] = server.llm.requests.at(-1)!.body.messages;
  return messages.filter((message) => message.role !== 'system').map((message) => `${message.role}: ${String(message.content ?? '')}`);
}

async function display(server: Hearth, sessionId: string): Promise<any[]> {
  return (await server.request('GET', `/sessions/${sessionId}`)).body.messages;
}

async function context(server: Hearth, sessionId: string): Promise<any[]> {
  return (await server.request('GET', `/sessions/${sessionId}/context`)).body.messages;
}

describe('regenerate', () => {
  it('answers the last message again over REST: the old answer stays in the display marked superseded, the context drops it', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    server.llm.script({ content: 'First answer.' }, { content: 'Second answer.' });
    expect((await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'Tell me a joke' })).body.content).toBe('First answer.');

    const regenerated = await server.request('POST', `/sessions/${sessionId}/regenerate`);
    expect(regenerated.status).toBe(200);
    expect(regenerated.body).toMatchObject({ content: 'Second answer.', stopped: false });

    expect(lastConversation(server)).toEqual(['user: Tell me a joke']);
    expect((await display(server, sessionId)).map((message) => [message.role, message.content, message.superseded ?? false])).toEqual([
      ['user', 'Tell me a joke', false],
      ['assistant', 'First answer.', true],
      ['assistant', 'Second answer.', false],
    ]);
    expect((await context(server, sessionId)).map((message) => message.content)).toEqual(['Tell me a joke', 'Second answer.']);
  });

  it('runs again after a failed turn, which left no answer, without storing the message twice (WebSocket)', async () => {
    const server = await start('openai');
    const sessionId = await server.createSession();
    const socket = await server.connect(sessionId);
    await socket.next('session_sync');
    server.llm.script({ status: 400, errorMessage: 'model is overloaded' }, { content: 'Here it is.' });
    socket.send({ type: 'message', content: 'Summarise my week' });
    expect((await socket.next('error')).code).toBe('llm_error');
    await socket.next('session_sync');

    socket.send({ type: 'regenerate' });
    await socket.next('stream_start');
    expect((await socket.next('stream_end')).content).toBe('Here it is.');
    expect(lastConversation(server)).toEqual(['user: Summarise my week']);
    expect((await display(server, sessionId)).map((message) => [message.role, message.content])).toEqual([
      ['user', 'Summarise my week'],
      ['assistant', 'Here it is.'],
    ]);
    socket.close();
  });

  it('drops a failed turn\'s tool calls from the context, so the next request has no dangling call', async () => {
    const server = await start('openai');
    const sessionId = await server.createSession();
    server.llm.script({ toolCalls: [{ name: 'todo_read', arguments: {} }] }, { status: 400, errorMessage: 'broke mid-turn' }, { content: 'Done.' });
    expect((await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'Check my list' })).status).toBe(502);
    expect((await context(server, sessionId)).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);

    expect((await server.request('POST', `/sessions/${sessionId}/regenerate`)).body.content).toBe('Done.');
    expect(lastConversation(server)).toEqual(['user: Check my list']);
    const shown = await display(server, sessionId);
    expect(shown.map((message) => [message.role, message.superseded ?? false])).toEqual([
      ['user', false],
      ['assistant', true],
      ['tool', true],
      ['assistant', false],
    ]);
  });

  it('refuses a session with nothing to answer, and an unknown session', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    const refused = await server.request('POST', `/sessions/${sessionId}/regenerate`);
    expect(refused).toEqual({ status: 409, body: { error: { code: 'nothing_to_regenerate', message: expect.any(String) } } });
    expect((await server.request('POST', '/sessions/nope/regenerate')).status).toBe(404);
    expect(server.llm.requests).toHaveLength(0);
  });
});

describe('edit and resend', () => {
  it('replaces a user message: the model sees no trace of the old branch, the display keeps it marked superseded', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    server.llm.script({ content: 'Paris is lovely.' }, { content: 'The train takes 4 hours.' }, { content: 'Rome is lovely.' }, { content: 'Pack light.' });
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'Plan a trip to Paris' });
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'How long by train?' });
    const first = (await display(server, sessionId))[0];

    const edited = await server.request('POST', `/sessions/${sessionId}/messages/${first.id}/edit`, { content: 'Plan a trip to Rome' });
    expect(edited.status).toBe(200);
    expect(edited.body.content).toBe('Rome is lovely.');
    expect(lastConversation(server)).toEqual(['user: Plan a trip to Rome']);

    await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'What should I pack?' });
    const sent = lastConversation(server);
    expect(sent).toEqual(['user: Plan a trip to Rome', 'assistant: Rome is lovely.', 'user: What should I pack?']);
    expect(sent.join('\n')).not.toMatch(/Paris|train/);

    expect((await display(server, sessionId)).map((message) => [message.content, message.superseded ?? false])).toEqual([
      ['Plan a trip to Paris', true],
      ['Paris is lovely.', true],
      ['How long by train?', true],
      ['The train takes 4 hours.', true],
      ['Plan a trip to Rome', false],
      ['Rome is lovely.', false],
      ['What should I pack?', false],
      ['Pack light.', false],
    ]);
  });

  it('edits over the WebSocket, and refuses a superseded, an assistant or an unknown message with a clear error', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    server.llm.script({ content: 'Hi!' }, { content: 'Hello again!' });
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hi' });
    const [question, answer] = await display(server, sessionId);
    const socket = await server.connect(sessionId);
    await socket.next('session_sync');

    socket.send({ type: 'edit', message_id: question.id, content: 'Hello' });
    expect((await socket.next('stream_end')).content).toBe('Hello again!');

    socket.send({ type: 'edit', message_id: question.id, content: 'Hey' });
    expect(await socket.next('error')).toEqual({ type: 'error', code: 'message_not_editable', message: expect.stringContaining('already replaced') });
    socket.send({ type: 'edit', message_id: answer.id, content: 'Hey' });
    expect(await socket.next('error')).toEqual({ type: 'error', code: 'message_not_editable', message: expect.stringContaining('your own messages') });
    socket.send({ type: 'edit', message_id: 999_999, content: 'Hey' });
    expect((await socket.next('error')).code).toBe('message_not_found');
    socket.send({ type: 'edit', message_id: 'first', content: 'Hey' });
    expect(await socket.next('error')).toEqual({ type: 'error', code: 'invalid_frame', message: expect.stringContaining('edit') });
    expect(server.llm.requests).toHaveLength(2);

    const refused = await server.request('POST', `/sessions/${sessionId}/messages/${question.id}/edit`, { content: 'Hey' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('message_not_editable');
    socket.close();
  });

  it('refuses to edit a message that compression already summarised', async () => {
    const hearth = await startApp({ env: { OLLAMA_NUM_CTX: '2048', CONTEXT_COMPRESSION_THRESHOLD: '0.5', CONTEXT_KEEP_RECENT: '1' } });
    const server = hearth;
    const sessionId = await server.createSession();
    const long = 'word '.repeat(400);
    server.llm.respondWith((request) => (JSON.stringify(request.body).includes('condense') ? { content: '## Current goal\n- chat' } : { content: `ok ${long}` }));
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: `first ${long}` });
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'second' });
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'third' });
    const summarised = (await context(server, sessionId)).some((message) => message.is_summary);
    expect(summarised).toBe(true);

    const first = (await display(server, sessionId))[0];
    const refused = await server.request('POST', `/sessions/${sessionId}/messages/${first.id}/edit`, { content: 'changed' });
    expect(refused).toEqual({ status: 409, body: { error: { code: 'message_not_editable', message: expect.stringContaining('summarised') } } });
  });
});

describe('a busy session', () => {
  it('refuses regenerate and edit while a run is active, over REST and the WebSocket', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    server.llm.script({ content: 'Done.' });
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: 'One' });
    const [question] = await display(server, sessionId);
    const socket = await server.connect(sessionId);
    await socket.next('session_sync');
    server.llm.script({ chunks: ['Slow'], hang: true });
    socket.send({ type: 'message', content: 'Two' });
    await socket.next('stream_delta');

    socket.send({ type: 'regenerate' });
    expect((await socket.next('error')).code).toBe('session_busy');
    socket.send({ type: 'edit', message_id: question.id, content: 'Uno' });
    expect((await socket.next('error')).code).toBe('session_busy');
    expect((await server.request('POST', `/sessions/${sessionId}/regenerate`)).body.error.code).toBe('session_busy');
    expect((await server.request('POST', `/sessions/${sessionId}/messages/${question.id}/edit`, { content: 'Uno' })).status).toBe(409);

    socket.send({ type: 'stop' });
    await socket.next('stream_stopped');
    expect((await display(server, sessionId)).filter((message) => message.superseded)).toEqual([]);
    socket.close();
  });
});
