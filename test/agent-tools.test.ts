import Database from 'better-sqlite3';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

const toolNames = (request: { body: any }) => request.body.tools.map((tool: any) => tool.function.name) as string[];

describe('switch_profile', () => {
  it('once the person allows it, changes the profile, emits profile_switched, and the next request of the same run uses the new prompt and tools', async () => {
    const hearth = await start();
    hearth.llm.script({ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'server_admin' } }] }, { content: 'Now an admin.' });
    const sessionId = await hearth.createSession('secretary');
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Check my server' });
    const asked = await socket.next('approval_required');
    expect(asked).toMatchObject({ tool: 'switch_profile', subject: 'secretary -> server_admin', reason: expect.stringMatching(/from Personal Secretary to Server Administrator/) });
    socket.send({ type: 'approve', call_id: asked.call_id, decision: 'allow' });
    expect(await socket.next('profile_switched')).toEqual({ type: 'profile_switched', profile_id: 'server_admin', profile_name: 'Server Administrator' });
    await socket.next('stream_end');

    const [before, after] = hearth.llm.requests;
    expect(before!.body.messages[0].content).not.toEqual(after!.body.messages[0].content);
    expect(after!.body.messages[0].content).toMatch(/server/i);
    expect(after!.body.options.temperature).toBe(0.2);
    expect(toolNames(after!)).not.toEqual(toolNames(before!));
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('server_admin');
  });

  it('refuses an unknown profile with the list of profiles', async () => {
    const hearth = await start();
    hearth.llm.script({ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'chef' } }] }, { content: 'ok' });
    const socket = await hearth.connect(await hearth.createSession());
    socket.send({ type: 'message', content: 'Cook' });
    const result = await socket.next('tool_call');
    expect(result.success).toBe(false);
    expect(result.result).toMatch(/no profile "chef".*secretary/);
  });
});

describe('spawn_agent', () => {
  it('runs an isolated sub-agent whose events are marked is_subagent and whose answer is the tool result', async () => {
    const hearth = await start();
    hearth.llm.script(
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Count to three and note it' } }] },
      { thinking: 'Noting first.', toolCalls: [{ name: 'scratchpad', arguments: { action: 'write', section: 'count', content: '1 2 3' } }] },
      { content: 'one two three' },
      { content: 'The sub-agent counted: one two three.' },
    );
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Delegate counting' });
    expect((await socket.next('stream_end')).content).toBe('The sub-agent counted: one two three.');

    const started = socket.ofType('tool_started').map((event) => [event.tool, event.is_subagent]);
    expect(started).toEqual([
      ['spawn_agent', false],
      ['scratchpad', true],
    ]);
    const finished = socket.ofType('tool_call');
    expect(finished.map((event) => [event.tool, event.is_subagent, event.success])).toEqual([
      ['scratchpad', true, true],
      ['spawn_agent', false, true],
    ]);
    expect(finished[1]!.result).toBe('one two three');
    expect(socket.ofType('turn_thinking')).toEqual([{ type: 'turn_thinking', thinking: 'Noting first.', is_subagent: true }]);
    expect(socket.ofType('stream_delta').map((event) => event.delta).join('')).toBe('The sub-agent counted: one two three.');

    const subagentRequest = hearth.llm.requests[1]!.body;
    expect(subagentRequest.messages.slice(1)).toEqual([{ role: 'user', content: 'Count to three and note it' }]);
    expect(toolNames(hearth.llm.requests[1]!)).not.toContain('spawn_agent');
    expect(toolNames(hearth.llm.requests[1]!)).not.toContain('switch_profile');

    const db = new Database(path.join(hearth.dataDir, 'hearth.db'), { readonly: true });
    const leftovers = db.prepare("select count(*) as count from scratchpad_sections where session_id like 'subagent_%'").get() as { count: number };
    db.close();
    expect(leftovers.count).toBe(0);
  });

  it('stops with the parent: the sub-agent gets the same signal', async () => {
    const hearth = await start();
    hearth.llm.script({ toolCalls: [{ name: 'spawn_agent', arguments: { task: 'Write a long essay' } }] }, { content: 'Essay…', hang: true });
    const socket = await hearth.connect(await hearth.createSession());
    socket.send({ type: 'message', content: 'Delegate' });
    await hearth.llm.waitForRequest(2);
    socket.send({ type: 'stop' });
    await socket.next('stream_stopped');
    await hearth.llm.waitForDisconnect();
    const spawn = socket.ofType('tool_call').find((event) => event.tool === 'spawn_agent');
    expect(spawn?.success).toBe(false);
  });
});

describe('list_tools and tool_manual', () => {
  it('lists live tools with their source and returns a manual file, the tool’s own manual, or one generated from the schema', async () => {
    const manuals = await mkdtemp(path.join(tmpdir(), 'hearth-manuals-'));
    await writeFile(path.join(manuals, 'todo.md'), '# todo\nThe long manual.');
    await writeFile(path.join(manuals, 'overridden.md'), 'The file wins.');
    const withManual = (name: string) => ({
      name,
      description: 'Short.',
      parameters: { type: 'object', properties: {} },
      manual: `# ${name}\nThe whole story, carried by the tool.`,
      execute: async () => 'done',
    });
    const hearth = await start({ env: { MANUALS_DIR: manuals }, tools: [withManual('documented'), withManual('overridden')] });
    hearth.llm.script(
      {
        toolCalls: [
          { name: 'list_tools', arguments: {} },
          { name: 'tool_manual', arguments: { name: 'todo' } },
          { name: 'tool_manual', arguments: { name: 'scratchpad' } },
          { name: 'tool_manual', arguments: { name: 'nothing' } },
          { name: 'tool_manual', arguments: { name: 'documented' } },
          { name: 'tool_manual', arguments: { name: 'overridden' } },
        ],
      },
      { content: 'ok' },
    );
    const socket = await hearth.connect(await hearth.createSession());
    socket.send({ type: 'message', content: 'What can you do?' });
    await socket.next('stream_end');
    const [list, todo, scratchpad, nothing, documented, overridden] = socket.ofType('tool_call');
    expect(list!.result).toMatch(/- scratchpad \(builtin\): /);
    expect(list!.result).toMatch(/- tool_manual \(builtin\): /);
    expect(todo!.result).toBe('# todo\nThe long manual.');
    expect(scratchpad!.result).toMatch(/^# scratchpad\n[\s\S]*`action` \(one of write, append, read, clear, list, required\)/);
    expect(scratchpad!.result).toContain('## Schema\n```json\n');
    expect(nothing).toMatchObject({ success: false });
    expect(documented).toMatchObject({ success: true, result: '# documented\nThe whole story, carried by the tool.' });
    expect(overridden!.result).toBe('The file wins.');
  });
});

describe('scratchpad sections of the profile', () => {
  it('lists the profile’s sections, written or not', async () => {
    const hearth = await start();
    hearth.llm.script(
      { toolCalls: [{ name: 'scratchpad', arguments: { action: 'write', section: 'status', content: 'nginx up' } }, { name: 'scratchpad', arguments: { action: 'list' } }] },
      { content: 'ok' },
    );
    const sessionId = await hearth.createSession('server_admin');
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Take notes' });
    await socket.next('stream_end');
    const list = socket.ofType('tool_call')[1]!.result;
    expect(list).toContain('- status (8 chars)');
    for (const section of ['logs', 'errors', 'hypothesis', 'actions']) expect(list).toContain(`- ${section} (empty; suggested by your profile)`);
    expect(hearth.llm.requests[0]!.body.messages[0].content).toContain('status, logs, errors, hypothesis, actions');
  });
});
