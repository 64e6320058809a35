import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';
import { createTestTools, testProfile } from './support/test-tools.ts';

const startApp = useHearth();

for (const backend of ['ollama', 'openai'] as const) {
  describe(`tool loop (${backend})`, () => {
    const start = (maxIterations?: number) =>
      startApp({ backend, tools: createTestTools(), profiles: { tester: testProfile(maxIterations) } });

    it('runs several rounds of tool calls and appends results to both buffers', async () => {
      const hearth = await start();
      hearth.llm.script(
        { thinking: 'I should add.', toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 3 } }] },
        { toolCalls: [{ name: 'add_numbers', arguments: { a: 5, b: 10 } }, { name: 'report_session', arguments: {} }] },
        { content: 'The total is 15.' },
      );
      const sessionId = await hearth.createSession('tester');
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Add things' });
      const end = await socket.next('stream_end');
      expect(end.content).toBe('The total is 15.');

      const calls = socket.ofType('tool_call');
      expect(calls.map((call) => [call.tool, call.result, call.success])).toEqual([
        ['add_numbers', '5', true],
        ['add_numbers', '15', true],
        ['report_session', `session=${sessionId}`, true],
      ]);
      expect(socket.ofType('tool_started').map((event) => event.call_id)).toEqual(calls.map((call) => call.call_id));
      expect(socket.ofType('turn_thinking')).toEqual([{ type: 'turn_thinking', thinking: 'I should add.', is_subagent: false }]);

      // The third request carries both rounds' calls and results, in order.
      const third = hearth.llm.requests[2]!.body.messages;
      const roles = third.map((message: any) => message.role);
      expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'tool']);
      expect(third.at(-2).content).toBe('15');

      for (const buffer of ['', '/context']) {
        const { body } = await hearth.request('GET', `/sessions/${sessionId}${buffer}`);
        expect(body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'tool', 'assistant']);
        expect(body.messages[1].tool_calls[0]).toMatchObject({ name: 'add_numbers', arguments: { a: 2, b: 3 } });
        expect(body.messages[2]).toMatchObject({ role: 'tool', name: 'add_numbers', content: '5', success: true });
      }
    });

    it('turns every failure kind into a success:false result the model sees', async () => {
      const hearth = await start();
      hearth.llm.script(
        {
          toolCalls: [
            { name: 'no_such_tool', arguments: {} },
            { name: 'add_numbers', arguments: { a: 'two', b: 3 } },
            { name: 'add_numbers', arguments: '{"a": 1, "b":' },
            { name: 'explode', arguments: {} },
            { name: 'too_slow', arguments: {} },
          ],
        },
        { content: 'Sorry, everything failed.' },
      );
      const sessionId = await hearth.createSession('tester');
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Break things' });
      await socket.next('stream_end');

      const results = socket.ofType('tool_call');
      expect(results.every((result) => !result.success)).toBe(true);
      const [unknown, invalid, malformed, thrown, timedOut] = results.map((result) => result.result);
      expect(unknown).toMatch(/no tool named "no_such_tool".*Available tools: add_numbers, explode/);
      expect(invalid).toMatch(/invalid arguments for add_numbers: "a" must be number/);
      expect(malformed).toMatch(/not a JSON object/);
      expect(thrown).toMatch(/explode failed: the fuse was lit/);
      expect(timedOut).toMatch(/too_slow timed out after 0.1 s/);

      const toolMessages = hearth.llm.requests[1]!.body.messages.filter((message: any) => message.role === 'tool');
      expect(toolMessages.map((message: any) => message.content)).toEqual([unknown, invalid, malformed, thrown, timedOut]);
    });

    it('makes one last call without tools when the iteration budget runs out', async () => {
      const hearth = await start(2);
      hearth.llm.respondWith((request) =>
        request.body.tools ? { toolCalls: [{ name: 'add_numbers', arguments: { a: 1, b: 1 } }] } : { content: 'Out of budget: 2.' },
      );
      const sessionId = await hearth.createSession('tester');
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Loop forever' });
      expect((await socket.next('stream_end')).content).toBe('Out of budget: 2.');
      expect(hearth.llm.requests).toHaveLength(3);
      const last = hearth.llm.requests[2]!.body;
      expect(last.tools).toBeUndefined();
      expect(last.messages.at(-1).content).toMatch(/tool budget for this turn is used up/);
    });
  });
}
