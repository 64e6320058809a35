import { describe, expect, it } from 'vitest';
import { startHearth, useHearth } from './support/hearth-server.ts';

const start = useHearth();

describe('session WebSocket', () => {
  it('closes with 4004 for an unknown session', async () => {
    const hearth = await start();
    const socket = await hearth.connect('no-such-session');
    expect(await socket.closed()).toBe(4004);
  });

  it('answers malformed frames with error events and keeps the socket open', async () => {
    const hearth = await start();
    const socket = await hearth.connect(await hearth.createSession());
    await socket.next('session_sync');
    for (const frame of ['not json', '[]', 'null', '{"type":"dance"}', '{"type":"message"}', '{"type":"message","content":""}', '{"type":"message","content":"hi","extra":1}']) {
      socket.send(frame);
      const error = await socket.next('error');
      expect(error.code).toBe('invalid_frame');
      expect(error.message.length).toBeGreaterThan(10);
    }
    socket.send({ type: 'message', content: 'Still there?' });
    expect((await socket.next('stream_end')).content).toBe('ok');
    expect(socket.closeCode).toBeUndefined();
  });

  it('refuses a second message while a run is active with session_busy', async () => {
    const hearth = await start();
    hearth.llm.script({ content: 'Working', hang: true });
    const socket = await hearth.connect(await hearth.createSession());
    socket.send({ type: 'message', content: 'First' });
    await hearth.llm.waitForRequest(1);
    socket.send({ type: 'message', content: 'Second' });
    expect(await socket.next('error')).toMatchObject({ code: 'session_busy' });
    socket.send({ type: 'stop' });
    await socket.next('stream_stopped');
    expect(hearth.llm.requests).toHaveLength(1);
  });

  it('fans events out to every socket, and a socket joining mid-run gets the run so far, then live events', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    hearth.llm.script({ thinking: 'Hmm.', chunks: ['Part one. ', 'Part two.'], hang: true });
    const first = await hearth.connect(sessionId);
    first.send({ type: 'message', content: 'Go' });
    await first.nextMatching((event) => event.type === 'stream_delta' && event.delta === 'Part two.', 'last delta');

    const late = await hearth.connect(sessionId);
    await late.nextMatching((event) => event.type === 'stream_delta', 'replayed delta');
    expect(late.types()).toEqual(['stream_start', 'thinking_delta', 'thinking_end', 'stream_delta']);
    expect(late.ofType('stream_delta')[0]!.delta).toBe('Part one. Part two.');
    expect(late.ofType('thinking_delta')[0]!.delta).toBe('Hmm.');

    const watcher = await hearth.connect(sessionId);
    await watcher.next('stream_start');
    first.send({ type: 'stop' });
    for (const socket of [first, late, watcher]) expect((await socket.next('stream_stopped')).content).toBe('Part one. Part two.');
    expect(first.ofType('session_sync')).toHaveLength(1);
    expect(late.ofType('session_sync')).toHaveLength(0);
  });

  it('reports an unreachable LLM as an error event naming the URL, then a session_sync', async () => {
    const probe = await startHearth();
    const deadUrl = probe.llm.url;
    await probe.llm.close();
    const hearth = await start({ env: { OLLAMA_HOST: deadUrl } });
    await probe.close().catch(() => undefined);
    const socket = await hearth.connect(await hearth.createSession());
    await socket.next('session_sync');
    socket.send({ type: 'message', content: 'Hello?' });
    const error = await socket.next('error');
    expect(error.code).toBe('llm_unreachable');
    expect(error.message).toContain(deadUrl);
    expect(error.message).toMatch(/ollama serve/);
    expect(await socket.next('session_sync')).toEqual({ type: 'session_sync', running: false });
    expect((await hearth.request('GET', '/health')).status).toBe(200);
  });

});

describe('a session deleted while its sockets are open', () => {
  it('closes them with 4004, as for an unknown session', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    const [first, second] = [await hearth.connect(sessionId), await hearth.connect(sessionId)];
    await first.next('session_sync');
    expect((await hearth.request('DELETE', `/sessions/${sessionId}`)).status).toBe(204);
    expect(await first.closed()).toBe(4004);
    expect(await second.closed()).toBe(4004);
  });
});
