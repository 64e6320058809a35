import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HearthEvent } from '../src/events/hearth-events.ts';
import { recordApproval } from '../src/store/approvals-repository.ts';
import { openDatabase } from '../src/store/database.ts';
import { runProcess } from '../src/tools/process-runner.ts';
import type { Tool } from '../src/tools/tool.ts';
import { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { createTestTools } from './support/test-tools.ts';

let workDir: string;
beforeEach(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'hearth-approvals-'));
});
afterEach(async () => {
  await rm(workDir, { recursive: true, force: true });
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const startApp = useHearth();

/** A shell tool that really runs its command line in the test's folder, judged by that command line. */
function shellTool(folder: () => string): Tool<{ command: string }> {
  return {
    name: 'shell',
    description: 'Runs a shell command.',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false },
    subject: (args) => args.command,
    commandSubject: true,
    async execute(args, context) {
      const result = await runProcess({ executable: '/bin/sh', args: ['-c', args.command], cwd: folder(), env: {}, timeoutMs: 10_000, signal: context.signal });
      return { output: result.stdout, success: result.exitCode === 0 };
    },
  };
}

function guardedProfile(approvals: string, tools = '[shell, add_numbers, spawn_agent, switch_profile]'): string {
  return `---\nid: guarded\nname: Guarded\nmax_iterations: 6\ntools: ${tools}\napprovals:\n${approvals}\n---\nYou run commands.\n`;
}

const laxProfile = `---\nid: lax\nname: Lax\ntools: [shell, add_numbers]\n---\nAnything goes.\n`;

const askShell = '  default: allow\n  ask: [shell]\n  allow: ["shell(echo *)"]\n  deny: ["shell(rm *)"]';

async function start(backend: 'ollama' | 'openai', approvals = askShell, env: Record<string, string> = {}) {
  const hearth = await startApp({
    backend,
    tools: [shellTool(() => workDir), ...createTestTools()],
    profiles: { guarded: guardedProfile(approvals), lax: laxProfile },
    env,
  });
  return hearth;
}

const touch = (name: string) => ({ name: 'shell', arguments: { command: `touch ${name}` } });

for (const backend of ['ollama', 'openai'] as const) {
  describe(`approvals (${backend})`, () => {
    it('asks, waits, and runs the tool once the person allows it over the socket', async () => {
      const server = await start(backend);
      server.llm.script({ toolCalls: [touch('allowed.txt')] }, { content: 'Done.' });
      const sessionId = await server.createSession('guarded');
      const socket = await server.connect(sessionId);
      socket.send({ type: 'message', content: 'Make a file' });

      const required = await socket.next('approval_required');
      expect(required).toMatchObject({ tool: 'shell', subject: 'touch allowed.txt', args: { command: 'touch allowed.txt' }, reason: 'rule shell', is_subagent: false });
      expect(Date.parse(required.expires_at) - Date.now()).toBeGreaterThan(500_000);
      expect(existsSync(path.join(workDir, 'allowed.txt'))).toBe(false);

      // The one person of this Hearth asked, and decides.
      const owner = await server.deps.household.firstOwner();
      const ownerName = { id: owner.id, name: owner.name };
      expect(required).toMatchObject({ asked_by: ownerName, deciders: [ownerName], can_decide: true });
      socket.send({ type: 'approve', call_id: required.call_id, decision: 'allow' });
      expect(await socket.next('approval_resolved')).toEqual({
        type: 'approval_resolved',
        call_id: required.call_id,
        decision: 'allow',
        by: 'user',
        remember: 'once',
        decider: ownerName,
        via: 'page',
      });
      expect((await socket.next('tool_call')).success).toBe(true);
      await socket.next('stream_end');
      expect(existsSync(path.join(workDir, 'allowed.txt'))).toBe(true);
      socket.close();
    });

    it('denied over REST: nothing happens on disk, the model hears why and answers', async () => {
      const server = await start(backend);
      server.llm.script({ toolCalls: [touch('denied.txt')] }, { content: 'Understood, I left it.' });
      const sessionId = await server.createSession('guarded');
      const socket = await server.connect(sessionId);
      socket.send({ type: 'message', content: 'Make a file' });
      const { call_id: callId } = await socket.next('approval_required');

      const decided = await server.request('POST', `/sessions/${sessionId}/approvals/${callId}`, { decision: 'deny' });
      expect(decided).toEqual({ status: 200, body: { call_id: callId, decision: 'deny', by: 'user', remember: 'once' } });
      const result = await socket.next('tool_call');
      expect(result.success).toBe(false);
      expect(result.result).toMatch(/The person denied this call \(shell: touch denied.txt\); it did not run/);
      expect((await socket.next('stream_end')).content).toBe('Understood, I left it.');
      expect(existsSync(path.join(workDir, 'denied.txt'))).toBe(false);
      const toolMessage = server.llm.requests[1]!.body.messages.find((message: any) => message.role === 'tool');
      expect(toolMessage.content).toBe(result.result);
      // Decided once: a second answer finds nothing waiting.
      expect((await server.request('POST', `/sessions/${sessionId}/approvals/${callId}`, { decision: 'allow' })).body.error.code).toBe('approval_not_found');
      socket.close();
    });

    it('a chained command never rides on an allow glob, and deny beats allow without asking', async () => {
      const server = await start(backend);
      server.llm.script(
        { toolCalls: [{ name: 'shell', arguments: { command: 'echo a; touch chained.txt' } }] },
        { toolCalls: [{ name: 'shell', arguments: { command: 'echo plain' } }, { name: 'shell', arguments: { command: 'rm -f keep.txt' } }] },
        { content: 'ok' },
      );
      await runProcess({ executable: '/bin/sh', args: ['-c', 'touch keep.txt'], cwd: workDir, env: {}, timeoutMs: 5_000 });
      const sessionId = await server.createSession('guarded');
      const socket = await server.connect(sessionId);
      socket.send({ type: 'message', content: 'Go' });
      const required = await socket.next('approval_required');
      expect(required.subject).toBe('echo a; touch chained.txt');
      socket.send({ type: 'approve', call_id: required.call_id, decision: 'deny' });
      await socket.next('stream_end');

      const [chained, plain, remove] = socket.ofType('tool_call');
      expect(chained!.success).toBe(false);
      expect(plain).toMatchObject({ success: true, result: 'plain\n' });
      expect(remove!.result).toMatch(/Refused by the rule shell\(rm \*\)/);
      expect(socket.ofType('approval_required')).toHaveLength(1);
      expect(existsSync(path.join(workDir, 'chained.txt'))).toBe(false);
      expect(existsSync(path.join(workDir, 'keep.txt'))).toBe(true);
      socket.close();
    });

    it('denies on timeout and on stop', async () => {
      const server = await start(backend, askShell, { APPROVAL_TIMEOUT_S: '1' });
      server.llm.script({ toolCalls: [touch('late.txt')] }, { content: 'Nobody answered.' });
      const sessionId = await server.createSession('guarded');
      const socket = await server.connect(sessionId);
      socket.send({ type: 'message', content: 'Go' });
      await socket.next('approval_required');
      expect(await socket.next('approval_resolved', 5_000)).toMatchObject({ decision: 'deny', by: 'timeout' });
      expect((await socket.next('tool_call')).result).toMatch(/Nobody decided on this call within 1 s/);
      await socket.next('stream_end');

      server.llm.script({ toolCalls: [touch('stopped.txt')] });
      socket.send({ type: 'message', content: 'Again' });
      await socket.next('approval_required');
      socket.send({ type: 'stop' });
      expect(await socket.next('approval_resolved')).toMatchObject({ decision: 'deny', by: 'stop' });
      await socket.next('stream_stopped');
      expect(existsSync(path.join(workDir, 'late.txt'))).toBe(false);
      expect(existsSync(path.join(workDir, 'stopped.txt'))).toBe(false);

      const { body } = await server.request('GET', '/approvals?status=all');
      expect(body.approvals.map((row: any) => [row.subject, row.decision, row.by])).toEqual([
        ['touch stopped.txt', 'deny', 'stop'],
        ['touch late.txt', 'deny', 'timeout'],
      ]);
      socket.close();
    });
  });
}

describe('approvals', () => {
  it('a socket that joins late sees the waiting approval and can answer it', async () => {
    const server = await start('ollama');
    server.llm.script({ toolCalls: [touch('late-joiner.txt')] }, { content: 'Done.' });
    const sessionId = await server.createSession('guarded');
    const first = await server.connect(sessionId);
    first.send({ type: 'message', content: 'Go' });
    const required = await first.next('approval_required');

    const late = await server.connect(sessionId);
    expect(await late.next('approval_required')).toEqual(required);
    expect((await server.request('GET', '/approvals?status=pending')).body.approvals).toMatchObject([
      { session_id: sessionId, call_id: required.call_id, tool: 'shell', subject: 'touch late-joiner.txt', status: 'pending', decision: null },
    ]);
    late.send({ type: 'approve', call_id: required.call_id, decision: 'allow' });
    await first.next('stream_end');
    expect(existsSync(path.join(workDir, 'late-joiner.txt'))).toBe(true);
    expect((await server.request('GET', '/approvals?status=pending')).body.approvals).toEqual([]);
    first.close();
    late.close();
  });

  it('remember:"session" stops asking for that tool and subject in that session only', async () => {
    const server = await start('openai');
    server.llm.script(
      { toolCalls: [touch('again.txt')] },
      { toolCalls: [touch('again.txt')] },
      { toolCalls: [touch('other.txt')] },
      { content: 'done' },
    );
    const sessionId = await server.createSession('guarded');
    const socket = await server.connect(sessionId);
    socket.send({ type: 'message', content: 'Go' });
    const first = await socket.next('approval_required');
    socket.send({ type: 'approve', call_id: first.call_id, decision: 'allow', remember: 'session' });
    const other = await socket.next('approval_required');
    expect(other.subject).toBe('touch other.txt');
    socket.send({ type: 'approve', call_id: other.call_id, decision: 'deny' });
    await socket.next('stream_end');
    expect(socket.ofType('tool_call').map((call) => call.success)).toEqual([true, true, false]);

    const rows = (await server.request('GET', `/approvals?session_id=${sessionId}`)).body.approvals;
    expect(rows.map((row: any) => [row.subject, row.decision, row.by, row.rule])).toEqual([
      ['touch other.txt', 'deny', 'user', 'shell'],
      ['touch again.txt', 'allow', 'rule', 'remembered for this session'],
      ['touch again.txt', 'allow', 'user', 'shell'],
    ]);

    // Another session is asked again.
    server.llm.script({ toolCalls: [touch('again.txt')] }, { content: 'done' });
    const second = await server.createSession('guarded');
    const secondSocket = await server.connect(second);
    secondSocket.send({ type: 'message', content: 'Go' });
    const asked = await secondSocket.next('approval_required');
    secondSocket.send({ type: 'approve', call_id: asked.call_id, decision: 'deny' });
    await secondSocket.next('stream_end');
    socket.close();
    secondSocket.close();
  });

  it('nothing the model sends skips the gate: name tricks, extra arguments, hidden newlines', async () => {
    const server = await start('ollama', '  default: deny\n  allow: ["shell(echo *)", add_numbers]');
    server.llm.script(
      {
        toolCalls: [
          { name: 'Shell', arguments: { command: 'touch a.txt' } },
          { name: 'shell(echo *)', arguments: { command: 'touch b.txt' } },
          { name: 'shell', arguments: { command: 'echo x', extra: 'touch c.txt' } },
          { name: 'shell', arguments: { command: 'echo x\ntouch d.txt' } },
          { name: 'shell', arguments: { command: 'echo x$(touch e.txt)' } },
          { name: 'shell', arguments: { command: 'echo "ok"' } },
        ],
      },
      { content: 'done' },
    );
    const sessionId = await server.createSession('guarded');
    const socket = await server.connect(sessionId);
    socket.send({ type: 'message', content: 'Go' });
    await socket.next('stream_end');
    const results = socket.ofType('tool_call');
    expect(results.map((call) => call.success)).toEqual([false, false, false, false, false, true]);
    expect(results[3]!.result).toMatch(/Refused by the rule default/);
    for (const name of ['a', 'b', 'c', 'd', 'e']) expect(existsSync(path.join(workDir, `${name}.txt`)), name).toBe(false);
    socket.close();
  });

  it('sub-agents pass the same gate, and a switch the person allows does not loosen the rest of the run', async () => {
    const server = await start('ollama', '  default: allow\n  ask: [shell]');
    server.llm.script(
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'make a file', profile_id: 'lax' } }] },
      { toolCalls: [touch('from-subagent.txt')] },
      { content: 'sub-agent done' },
      { toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'lax' } }] },
      { toolCalls: [touch('after-switch.txt')] },
      { content: 'all done' },
    );
    const sessionId = await server.createSession('guarded');
    const socket = await server.connect(sessionId);
    socket.send({ type: 'message', content: 'Go' });
    const fromSubagent = await socket.next('approval_required');
    expect(fromSubagent).toMatchObject({ subject: 'touch from-subagent.txt', is_subagent: true });
    expect((await server.request('POST', `/sessions/${sessionId}/approvals/${fromSubagent.call_id}`, { decision: 'deny' })).status).toBe(200);
    const switching = await socket.next('approval_required');
    expect(switching).toMatchObject({ tool: 'switch_profile', subject: 'guarded -> lax' });
    socket.send({ type: 'approve', call_id: switching.call_id, decision: 'allow' });
    const afterSwitch = await socket.next('approval_required');
    expect(afterSwitch).toMatchObject({ subject: 'touch after-switch.txt', is_subagent: false });
    socket.send({ type: 'approve', call_id: afterSwitch.call_id, decision: 'deny' });
    await socket.next('stream_end');
    expect(existsSync(path.join(workDir, 'from-subagent.txt'))).toBe(false);
    expect(existsSync(path.join(workDir, 'after-switch.txt'))).toBe(false);
    socket.close();
  });

  it('the events socket says hello with what waits, and announces approvals and sessions as they change', async () => {
    const server = await start('ollama');
    const events = await EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
    const next = (type: HearthEvent['type']) => events.nextMatching((event) => (event as { type: string }).type === type, type) as unknown as Promise<any>;
    expect(await next('hello')).toEqual({ type: 'hello', unread_notifications: 0, pending_approvals: [], backend: expect.objectContaining({ backend: 'ollama' }), model_pulls: [] });

    const sessionId = await server.createSession('guarded');
    server.llm.script({ toolCalls: [touch('announced.txt')] }, { content: 'ok' });
    const socket = await server.connect(sessionId);
    socket.send({ type: 'message', content: 'Go' });
    // An empty session is announced with its first message, not when it is created.
    expect(await next('sessions_changed')).toEqual({ type: 'sessions_changed', session_id: sessionId, change: 'created' });
    const required = await socket.next('approval_required');
    const waiting = await next('approvals_changed');
    const owner = await server.deps.household.firstOwner();
    const ownerName = { id: owner.id, name: owner.name };
    expect(waiting.pending).toEqual([
      {
        session_id: sessionId,
        call_id: required.call_id,
        tool: 'shell',
        subject: 'touch announced.txt',
        reason: 'rule shell',
        expires_at: required.expires_at,
        asked_by: ownerName,
        deciders: [ownerName],
        can_decide: true,
      },
    ]);
    const secondPage = await EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
    expect(((await secondPage.nextMatching(() => true)) as any).pending_approvals).toEqual(waiting.pending);

    socket.send({ type: 'approve', call_id: required.call_id, decision: 'allow' });
    expect((await next('approvals_changed')).pending).toEqual([]);
    await socket.next('stream_end');
    expect(await next('sessions_changed')).toMatchObject({ session_id: sessionId, change: 'updated' });

    await server.request('DELETE', `/sessions/${sessionId}`);
    await events.nextMatching((event: any) => event.type === 'sessions_changed' && event.change === 'deleted');
    events.close();
    secondPage.close();
    socket.close();
  });

  it('answers a decision for nothing waiting with a clear error, and a bad decision with 400', async () => {
    const server = await start('ollama');
    const sessionId = await server.createSession('guarded');
    const socket = await server.connect(sessionId);
    socket.send({ type: 'approve', call_id: 'call_nothing', decision: 'allow' });
    expect(await socket.next('error')).toMatchObject({ code: 'approval_not_found' });
    socket.send({ type: 'approve', call_id: 'call_nothing', decision: 'perhaps' });
    expect((await socket.next('error')).message).toMatch(/Invalid approve frame: \/decision/);
    expect((await server.request('POST', `/sessions/${sessionId}/approvals/call_nothing`, { decision: 'allow' })).status).toBe(404);
    expect((await server.request('POST', `/sessions/${sessionId}/approvals/call_nothing`, { decision: 'maybe' })).status).toBe(400);
    expect((await server.request('POST', '/sessions/nope/approvals/call_nothing', { decision: 'allow' })).body.error.code).toBe('session_not_found');
    expect((await server.request('GET', '/approvals?status=later')).status).toBe(400);
    expect((await server.request('GET', '/approvals?limit=1000')).status).toBe(200);
    expect((await server.request('GET', '/approvals?limit=1001')).status).toBe(400);
    socket.close();
  });

  it('a restart denies what the previous process left waiting', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-approvals-restart-'));
    let hearth: Hearth | undefined;
    try {
      const db = await openDatabase(path.join(dataDir, 'hearth.db'));
      await recordApproval(db, { sessionId: 's1', callId: 'call_left', tool: 'shell', subject: 'touch x', rule: 'shell', isSubagent: false, expiresAt: new Date().toISOString() });
      await db.destroy();
      hearth = await startApp({ dataDir });
      const { body } = await hearth.request('GET', '/approvals');
      expect(body.approvals).toMatchObject([{ call_id: 'call_left', decision: 'deny', by: 'stop', status: 'decided' }]);
    } finally {
      await hearth?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
