import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';
import { createTestTools } from './support/test-tools.ts';

// A REST turn that needs a person's decision (issue 35): 202 at once with the waiting calls, the
// session's state says so, a decision lets the run go on, and `wait: "end"` waits as before.

const startApp = useHearth();
const askingProfile = `---\nid: asking\nname: Asking\ntools: [add_numbers]\napprovals:\n  ask: [add_numbers]\n---\nYou add numbers.\n`;
const addTwoAndTwo = { toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 2 } }] };

async function start() {
  const hearth = await startApp({ tools: createTestTools(), profiles: { asking: askingProfile } });
  const owner = await hearth.deps.household.firstOwner();
  return { hearth, sessionId: await hearth.createSession('asking'), owner: { id: owner.id, name: owner.name } };
}

describe('POST /sessions/:id/messages and a call that waits for a person', () => {
  it('answers 202 with the waiting call, shows it in the session, and the decision lets the run answer', async () => {
    const { hearth, sessionId, owner } = await start();
    hearth.llm.script(addTwoAndTwo, { content: 'It is 4.' });

    const asked = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Add two and two' });
    expect(asked.status).toBe(202);
    expect(asked.body).toEqual({
      status: 'waiting_for_approval',
      approvals: [
        {
          session_id: sessionId,
          call_id: expect.any(String),
          tool: 'add_numbers',
          subject: 'add_numbers',
          reason: 'rule add_numbers',
          expires_at: expect.any(String),
          asked_by: owner,
          deciders: [owner],
          can_decide: true,
        },
      ],
    });
    const [waiting] = asked.body.approvals;

    const during = await hearth.request('GET', `/sessions/${sessionId}`);
    expect(during.body).toMatchObject({ state: 'waiting_for_approval', running: true, approvals: [{ call_id: waiting.call_id, tool: 'add_numbers' }] });
    expect((await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Again' })).body.error.code).toBe('session_busy');

    const ended = new Promise<void>((resolve) => hearth.deps.sessions!.follow(sessionId, (event) => event.type === 'stream_end' && resolve()));
    const decided = await hearth.request('POST', `/sessions/${sessionId}/approvals/${waiting.call_id}`, { decision: 'allow' });
    expect(decided.body).toEqual({ call_id: waiting.call_id, decision: 'allow', by: 'user', remember: 'once' });
    await ended;

    const after = await hearth.request('GET', `/sessions/${sessionId}`);
    expect(after.body).toMatchObject({ state: 'idle', running: false, approvals: [] });
    expect(after.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'It is 4.' });
  });

  it('answers 200 with the answer when nothing waits, and a turn with wait "end" waits through the decision', async () => {
    const { hearth, sessionId } = await start();
    hearth.llm.script({ content: 'Nothing to add.' });
    const plain = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ content: 'Nothing to add.', stopped: false });

    hearth.llm.script(addTwoAndTwo, { content: 'It is 4.' });
    const answered = hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Add two and two', wait: 'end' });
    const waiting = await new Promise<{ call_id: string }>((resolve) =>
      hearth.deps.sessions!.follow(sessionId, (event) => event.type === 'approval_required' && resolve(event)),
    );
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.state).toBe('waiting_for_approval');
    expect((await hearth.request('POST', `/sessions/${sessionId}/approvals/${waiting.call_id}`, { decision: 'deny' })).status).toBe(200);
    const { status, body } = await answered;
    expect(status).toBe(200);
    expect(body).toMatchObject({ content: 'It is 4.', stopped: false });
  });

  it('answers 202 for a regenerate and an edit that wait too, and refuses an unknown wait', async () => {
    const { hearth, sessionId } = await start();
    hearth.llm.script({ content: 'Hello.' });
    await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' });

    // Each run is stopped while its call waits, so the model is asked nothing after the call.
    hearth.llm.script(addTwoAndTwo);
    const regenerated = await hearth.request('POST', `/sessions/${sessionId}/regenerate`);
    expect(regenerated.status).toBe(202);
    expect((await hearth.request('POST', `/sessions/${sessionId}/stop`)).body).toEqual({ stopped: true });
    await hearth.deps.sessions!.whenIdle(sessionId);

    const [userMessage] = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
    hearth.llm.script(addTwoAndTwo);
    const edited = await hearth.request('POST', `/sessions/${sessionId}/messages/${userMessage.id}/edit`, { content: 'Add two and two' });
    expect(edited.status).toBe(202);
    expect(edited.body.approvals).toHaveLength(1);
    hearth.deps.sessions!.stop(sessionId);
    await hearth.deps.sessions!.whenIdle(sessionId);

    const refused = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello', wait: 'forever' });
    expect(refused.status).toBe(400);
  });
});
