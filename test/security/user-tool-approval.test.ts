// Granting a user tool more than the sandbox (issue 13): the model writes a tool that runs `id` through
// child_process, as it did when the hole was measured. Declaring `permissions` makes write_tool put the
// call to the person whatever the profile's rules say; only an approved call records the grant, in a
// file the sandboxed tools cannot write. Replayed through the real server, scripted model and sockets.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/protocol/events.ts';
import type { EventSocket } from '../support/event-socket.ts';
import type { Hearth } from '../support/hearth-server.ts';
import type { ScriptedToolCall } from '../support/scripted-llm.ts';
import { toolModule, useToolsHearth } from './user-tools-harness.ts';

/** write_tool and nothing else, and no approvals block: its default is allow, so only mustAsk can make it ask. */
const builderProfile = `---
id: builder
name: Builder
description: Writes tools.
temperature: 0.1
max_iterations: 8
planning_enabled: false
tools: [write_tool]
---
You write tools.
`;

const runsId = (permissions?: string) =>
  toolModule('sysinfo', {
    prelude: "import { execFileSync } from 'node:child_process';",
    execute: '  return execFileSync(\'id\').toString().trim();',
    ...(permissions !== undefined && { permissions }),
  });

const writeTool = (code: string): ScriptedToolCall => ({ name: 'write_tool', arguments: { name: 'sysinfo', code } });

const startTools = useToolsHearth();

async function start(): Promise<{ started: Hearth; socket: EventSocket }> {
  const started = await startTools({ userTools: {}, profiles: { builder: builderProfile } });
  return { started, socket: await started.connect(await started.createSession('builder')) };
}

/** Sends a message whose scripted rounds are `rounds`; answers the first approval with `decision`; gives the run's calls. */
async function runWithApproval(started: Hearth, socket: EventSocket, decision: 'allow' | 'deny', ...rounds: ScriptedToolCall[][]) {
  const before = socket.ofType('tool_call').length;
  started.llm.script(...rounds.map((toolCalls) => ({ toolCalls })), { content: 'Done.' });
  socket.send({ type: 'message', content: 'Write a tool that tells who the server runs as.' });
  const asked = await socket.next('approval_required', 30_000);
  socket.send({ type: 'approve', call_id: asked.call_id, decision });
  await socket.next('stream_end', 60_000);
  return { asked, calls: socket.ofType('tool_call').slice(before) };
}

const grantsFile = (started: Hearth) => path.join(started.config.TOOLS_DIR, 'permissions.json');

describe('granting a user tool permissions', () => {
  it('asks the person before write_tool installs a tool declaring childProcess; a denial installs and grants nothing', async () => {
    const { started, socket } = await start();
    const { asked, calls } = await runWithApproval(started, socket, 'deny', [writeTool(runsId('{ childProcess: true }'))]);
    expect(asked).toMatchObject({ tool: 'write_tool', subject: 'sysinfo' });
    expect(asked.reason).toMatch(/^The tool sysinfo asks for permissions beyond the sandbox: childProcess \(run programs inside its jail/);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ tool: 'write_tool', success: false, result: expect.stringMatching(/^The person denied this call/) });
    expect(existsSync(path.join(started.config.TOOLS_DIR, 'sysinfo.ts'))).toBe(false);
    expect(existsSync(grantsFile(started))).toBe(false);
  }, 90_000);

  it('records the approved grant, runs `id` with it, and drops it when a later version no longer declares it', async () => {
    const { started, socket } = await start();
    const code = runsId('{ childProcess: true }');
    const { calls } = await runWithApproval(started, socket, 'allow', [writeTool(code)], [{ name: 'sysinfo', arguments: {} }]);
    const [written, used] = calls as [EventOf<'tool_call'>, EventOf<'tool_call'>];
    expect(written).toMatchObject({ tool: 'write_tool', success: true });
    expect(written.result).toContain('It runs with the permissions the person approved: childProcess.');
    expect(used).toMatchObject({ tool: 'sysinfo', success: true, result: expect.stringMatching(/^uid=\d+/) });
    const grants = JSON.parse(await readFile(grantsFile(started), 'utf8'));
    expect(grants).toEqual({
      sysinfo: { permissions: ['childProcess'], sha256: createHash('sha256').update(code).digest('hex'), granted_at: expect.any(String) },
    });

    // A version without the declaration needs no approval, and takes the grant away with it.
    started.llm.script({ toolCalls: [writeTool(runsId())] }, { toolCalls: [{ name: 'sysinfo', arguments: {} }] }, { content: 'Done.' });
    socket.send({ type: 'message', content: 'Rewrite it without permissions.' });
    await socket.next('stream_end', 60_000);
    const [rewritten, refused] = socket.ofType('tool_call').slice(-2) as [EventOf<'tool_call'>, EventOf<'tool_call'>];
    expect(socket.ofType('approval_required')).toHaveLength(1);
    expect(rewritten).toMatchObject({ tool: 'write_tool', success: true });
    expect(refused).toMatchObject({ tool: 'sysinfo', success: false, result: expect.stringMatching(/^Error: sysinfo may not start child processes/) });
    expect(JSON.parse(await readFile(grantsFile(started), 'utf8'))).toEqual({});
  }, 90_000);

  it('refuses, without asking, a module whose permissions only show when it runs (so the person could not see them)', async () => {
    const { started, socket } = await start();
    const hidden = `${runsId()}\nconst granted = { childProcess: true };\nexport { granted as permissions };\n`;
    started.llm.script({ toolCalls: [writeTool(hidden)] }, { content: 'Done.' });
    socket.send({ type: 'message', content: 'Write it.' });
    await socket.next('stream_end', 60_000);
    expect(socket.ofType('approval_required')).toEqual([]);
    const [written] = socket.ofType('tool_call');
    expect(written).toMatchObject({ tool: 'write_tool', success: false });
    expect(written!.result).toMatch(/^sysinfo was not installed: it declares the permissions childProcess in a form that cannot be read before it runs/);
    expect(existsSync(path.join(started.config.TOOLS_DIR, 'sysinfo.ts'))).toBe(false);
    expect(existsSync(grantsFile(started))).toBe(false);
  }, 90_000);

  it("names the tool as write_tool's approval subject and asks only when permissions are declared", async () => {
    const { started } = await start();
    const writeToolTool = started.deps.tools.get('write_tool')!.tool;
    expect(writeToolTool.subject?.({ name: 'sysinfo', code: runsId() })).toBe('sysinfo');
    expect(writeToolTool.mustAsk?.({ name: 'sysinfo', code: runsId() })).toBeUndefined();
    expect(writeToolTool.mustAsk?.({ name: 'sysinfo', code: runsId('{ worker: true, childProcess: false }') })).toMatch(/worker \(start worker threads\)/);
    expect(writeToolTool.mustAsk?.({ name: 'sysinfo', code: runsId("{ 'childProcess': true, worker: true }") })).toMatch(/childProcess .* and worker/);
  });
});
