import { describe, expect, it } from 'vitest';
import { classifyPlan } from '../src/agent/planning.ts';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

describe('classifyPlan', () => {
  it('skips DIRECT replies and replies without numbered steps', () => {
    expect(classifyPlan('DIRECT')).toEqual({ kind: 'direct' });
    expect(classifyPlan('  direct — just answer')).toEqual({ kind: 'direct' });
    expect(classifyPlan('I will look it up and answer.')).toEqual({ kind: 'direct' });
    expect(classifyPlan('1. Search the web (web_search)\n2) Summarise')).toEqual({
      kind: 'plan',
      plan: '1. Search the web (web_search)\n2) Summarise',
    });
  });
});

for (const backend of ['ollama', 'openai'] as const) {
  describe(`planning phase (${backend})`, () => {
    it('stores a plan in both buffers, emits plan_ready, and continues from it', async () => {
      const hearth = await start({ backend, planning: true });
      const plan = '1. Note the question in the scratchpad (scratchpad)\n2. Answer it';
      hearth.llm.script({ content: plan }, { content: 'Done as planned.' });
      const sessionId = await hearth.createSession();
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Research the history of tea and write it up' });
      expect(await socket.next('plan_ready')).toEqual({ type: 'plan_ready', plan });
      expect((await socket.next('stream_end')).content).toBe('Done as planned.');
      expect(socket.types().indexOf('plan_ready')).toBeLessThan(socket.types().indexOf('stream_delta'));

      const [planning, loop] = hearth.llm.requests;
      expect(planning!.body.tools).toBeUndefined();
      expect(planning!.body.messages.at(-1).content).toMatch(/DIRECT/);
      expect(loop!.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: plan });
      for (const buffer of ['', '/context']) {
        const { body } = await hearth.request('GET', `/sessions/${sessionId}${buffer}`);
        expect(body.messages[1]).toMatchObject({ role: 'assistant', content: plan, is_plan: true });
      }
    });

    it('skips the plan when the model answers DIRECT', async () => {
      const hearth = await start({ backend, planning: true });
      hearth.llm.script({ content: 'DIRECT' }, { content: 'Hello to you too.' });
      const sessionId = await hearth.createSession();
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Hello' });
      expect((await socket.next('stream_end')).content).toBe('Hello to you too.');
      expect(socket.ofType('plan_ready')).toEqual([]);
      const { body } = await hearth.request('GET', `/sessions/${sessionId}/context`);
      expect(body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant']);
    });

    it('runs the turn without a plan when the planning call fails', async () => {
      const hearth = await start({ backend, planning: true });
      hearth.llm.script({ status: 500, errorMessage: 'planner crashed' }, { content: 'Answered anyway.' });
      const socket = await hearth.connect(await hearth.createSession());
      socket.send({ type: 'message', content: 'Plan a trip' });
      expect((await socket.next('stream_end')).content).toBe('Answered anyway.');
      expect(socket.ofType('plan_ready')).toEqual([]);
      expect(socket.ofType('error')).toEqual([]);
    });
  });
}
