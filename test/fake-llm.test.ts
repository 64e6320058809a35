// The fake LLM of `npm run dev:fake-llm`, run as that command runs it (a child process), with
// the real app pointed at it: each demo word shows the feature it stands for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFakeLlmToExit, startFakeLlmProcess, type FakeLlmProcess } from './support/fake-llm-process.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { unusedPort } from './support/llm-helpers.ts';

/** Writing a tool type-checks it in a worker (about a second of CPU the first time, which loads TypeScript): generous under a busy suite. */
const runTimeoutMs = 45_000;

let fakeLlm: FakeLlmProcess | undefined;
/** The port the fake LLM was given with --port; the last test finds it taken for a second one. */
let fakeLlmPort: number;
let hearth: Hearth;

beforeAll(async () => {
  fakeLlmPort = await unusedPort();
  fakeLlm = await startFakeLlmProcess(['--port', String(fakeLlmPort)]);
  // Planning stays on in the shipped profiles, as `npm start` has it.
  hearth = await startHearth({ planning: true, env: { OLLAMA_HOST: fakeLlm.url } });
}, 60_000);

afterAll(async () => {
  await hearth?.close();
  await fakeLlm?.stop();
});

describe('npm run dev:fake-llm', () => {
  it('plans a message that starts with "plan", then answers following the plan', async () => {
    const socket = await hearth.connect(await hearth.createSession('secretary'));
    socket.send({ type: 'message', content: 'Plan my week' });
    const plan = await socket.next('plan_ready', runTimeoutMs);
    expect(plan.plan).toMatch(/^1\. .*my week/);
    expect(plan.plan.split('\n').filter((line) => /^\d+\. /.test(line)).length).toBeGreaterThanOrEqual(3);
    const end = await socket.next('stream_end', runTimeoutMs);
    expect(end.content).toContain('I followed the plan above');
    socket.close();
  });

  it('answers any other message without a plan', async () => {
    const socket = await hearth.connect(await hearth.createSession('secretary'));
    socket.send({ type: 'message', content: 'Hello there' });
    const end = await socket.next('stream_end', runTimeoutMs);
    expect(end.content).toContain('Hello there');
    expect(socket.ofType('plan_ready')).toEqual([]);
    socket.close();
  });

  it('streams a long answer for "long …" until Stop ends it, and counts the stopped answer in the context', async () => {
    const sessionId = await hearth.createSession('secretary');
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'long story, please' });
    for (let delta = 0; delta < 5; delta++) await socket.next('stream_delta', runTimeoutMs);
    const streamingSince = Date.now();
    socket.send({ type: 'stop' });
    const stopped = await socket.next('stream_stopped', runTimeoutMs);
    // About a minute of text was on its way: a stop a few words in ends it long before that.
    expect(Date.now() - streamingSince).toBeLessThan(20_000);
    expect(stopped.content).toMatch(/^Once upon a time/);
    expect(stopped.length).toBeLessThan(500);
    expect(socket.ofType('stream_end')).toEqual([]);
    const context = await hearth.request('GET', `/sessions/${sessionId}/context`);
    expect(context.body.context_tokens).toBeGreaterThan(0);
    // The session takes the next message at once.
    socket.send({ type: 'message', content: 'Hello again' });
    expect((await socket.next('stream_end', runTimeoutMs)).content).toContain('Hello again');
    socket.close();
  });

  it('writes roll_dice for "make a tool …" once allowed, calls the new tool in the next round and answers with its result', async () => {
    const socket = await hearth.connect(await hearth.createSession('secretary'));
    socket.send({ type: 'message', content: 'Make a tool that rolls dice, then roll two six-sided dice' });
    // The shipped profiles ask before a tool is installed.
    const asked = await socket.next('approval_required', runTimeoutMs);
    expect(asked).toMatchObject({ tool: 'write_tool', subject: 'roll_dice' });
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'allow' });
    const end = await socket.next('stream_end', runTimeoutMs);
    const calls = socket.ofType('tool_call');
    expect(calls.map((call) => call.tool)).toEqual(['write_tool', 'roll_dice']);
    const [written, rolled] = calls;
    expect(written?.success, written?.result).toBe(true);
    expect(written?.args).toMatchObject({ name: 'roll_dice' });
    expect(rolled?.success, rolled?.result).toBe(true);
    expect(rolled?.args).toEqual({ count: 2, sides: 6 });
    expect(rolled?.result).toMatch(/^Rolled 2d6: [1-6] \+ [1-6] = \d+$/);
    expect(end.content).toContain(rolled?.result);
    expect(socket.ofType('plan_ready')).toEqual([]);
    const tools = await hearth.request('GET', '/agents/tools');
    expect(tools.body.tools.map((tool: { name: string }) => tool.name)).toContain('roll_dice');
    socket.close();
  }, 90_000);

  it('takes the arguments from the message: a command in backticks, a daily time, a todo item', async () => {
    const ask = async (profileId: string, content: string) => {
      const socket = await hearth.connect(await hearth.createSession(profileId));
      socket.send({ type: 'message', content });
      const call = await socket.next('tool_started', runTimeoutMs);
      const end = await socket.next('stream_end', runTimeoutMs);
      const [finished] = socket.ofType('tool_call');
      socket.close();
      return { call, finished, end };
    };

    const uptime = await ask('server_admin', 'run `uptime`');
    expect(uptime.call).toMatchObject({ tool: 'terminal', args: { command: 'uptime' } });

    const reminder = await ask('secretary', 'remind me every day at 9 to check mail');
    expect(reminder.call).toMatchObject({ tool: 'schedule', args: { action: 'create', cron: '0 9 * * *', prompt: 'Remind me to check mail.', name: 'check mail' } });
    expect(reminder.finished?.success, reminder.finished?.result).toBe(true);
    const schedules = (await hearth.request('GET', '/schedules')).body.schedules;
    expect(schedules).toContainEqual(expect.objectContaining({ cron: '0 9 * * *', prompt: 'Remind me to check mail.' }));

    const todo = await ask('secretary', 'add a todo to buy milk');
    expect(todo.call).toMatchObject({ tool: 'todo', args: { action: 'set', items: ['buy milk'] } });
    expect(todo.finished?.success, todo.finished?.result).toBe(true);
  }, 90_000);

  it('takes --port, and says in one line when that port is taken', async () => {
    expect(fakeLlm?.url).toBe(`http://127.0.0.1:${fakeLlmPort}`);
    const refused = await runFakeLlmToExit(['--port', String(fakeLlmPort)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `Port ${fakeLlmPort} is already in use (another fake LLM, or Ollama?). Stop it, or pick another port: npm run dev:fake-llm -- --port ${fakeLlmPort + 1}`,
    );
  }, 60_000);
});
