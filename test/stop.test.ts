import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitUntil } from './support/wait-until.ts';
import { useHearth } from './support/hearth-server.ts';
import { createTestTools, testProfile } from './support/test-tools.ts';

const start = useHearth();

for (const backend of ['ollama', 'openai'] as const) {
  describe(`stop (${backend})`, () => {
    it('over WebSocket cancels the LLM request, saves the partial answer and frees the session', async () => {
      const hearth = await start({ backend });
      hearth.llm.script({ chunks: ['Once ', 'upon ', 'a time'], hang: true }, { content: 'Next answer.' });
      const sessionId = await hearth.createSession();
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Tell me a long story' });
      await socket.nextMatching((event) => event.type === 'stream_delta' && event.delta === 'a time', 'the last delta');

      socket.send({ type: 'stop' });
      const stopped = await socket.next('stream_stopped');
      expect(stopped.content).toBe('Once upon a time');
      const disconnected = await hearth.llm.waitForDisconnect();
      expect(disconnected.completed).toBe(false);

      const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
      expect(body.running).toBe(false);
      expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Once upon a time', stopped: true });

      socket.send({ type: 'message', content: 'And now?' });
      expect((await socket.next('stream_end')).content).toBe('Next answer.');
    });

    it('over REST stops a running tool through its signal and keeps every call answered', async () => {
      const hearth = await start({ backend, tools: createTestTools(), profiles: { tester: testProfile() } });
      hearth.llm.script({ toolCalls: [{ name: 'wait_for_stop', arguments: {} }, { name: 'add_numbers', arguments: { a: 1, b: 2 } }] });
      const sessionId = await hearth.createSession('tester');
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Wait' });
      await socket.next('tool_started');

      expect((await hearth.request('POST', `/sessions/${sessionId}/stop`)).body).toEqual({ stopped: true });
      await socket.next('stream_stopped');
      const results = socket.ofType('tool_call');
      expect(results.map((result) => [result.tool, result.success])).toEqual([
        ['wait_for_stop', false],
        ['add_numbers', false],
      ]);
      expect(results[0]!.result).toMatch(/Stopped by the user/);

      const { body } = await hearth.request('GET', `/sessions/${sessionId}/context`);
      expect(body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
      expect(body.messages.at(-1).stopped).toBe(true);
      expect(hearth.llm.requests).toHaveLength(1);
      expect((await hearth.request('POST', `/sessions/${sessionId}/stop`)).body).toEqual({ stopped: false });
    });
  });
}

describe('stop during a terminal command', () => {
  it('kills the command and gives the model the output so far', async () => {
    const hearth = await start();
    hearth.llm.script({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo started; touch marker; sleep 30; echo never' } }] });
    const sessionId = await hearth.createSession('server_admin');
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Run it' });
    await socket.next('tool_started');
    socket.send({ type: 'approve', call_id: (await socket.next('approval_required')).call_id, decision: 'allow' });
    await waitUntil(() => existsSync(path.join(hearth.config.SESSION_FILES_DIR, sessionId, 'marker')));
    await hearth.request('POST', `/sessions/${sessionId}/stop`);
    await socket.next('stream_stopped');
    const result = socket.ofType('tool_call')[0]!;
    expect(result.success).toBe(false);
    expect(result.result).toMatch(/^Stopped by the user while terminal was running\./);
    expect(result.result).toContain('started');
    expect(result.result).not.toContain('never');
  });
});
