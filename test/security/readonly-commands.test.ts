import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type Hearth } from '../support/hearth-server.ts';

// Issue 24, measured with the shipped server_admin profile: `terminal(ss *)` let `ss -D <file>`
// overwrite a file, and `terminal(journalctl *)` let `journalctl --vacuu""um-size=1K` and
// `journalctl --rot` (`--rotate` abbreviated) run unasked. With `terminal(readonly)` each is
// asked, the card says why, and a denied call never runs; plain reading still runs at once.

const terminal = (command: string) => ({ name: 'terminal', arguments: { command } });

describe('server_admin: terminal(readonly) through the real server and a scripted model', () => {
  let hearth: Hearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth?.close());

  it('asks before ss -D, journalctl --vacuu""um-size and journalctl --rot, with the reason, and runs none of them when denied', async () => {
    const sessionId = await hearth.createSession('server_admin');
    // ss -D overwrites an existing file: the test's own file must survive unchanged.
    const target = path.join(hearth.dataDir, 'precious.txt');
    await writeFile(target, 'keep me\n');
    const asked = [
      { command: `ss -D ${target}`, reason: 'not read-only: `-D` writes a file' },
      { command: 'journalctl --vacu""um-size=1K', reason: 'not read-only: `--vacuum-size=1K` deletes archived journal files' },
      // The spelling is `--vacuuum-size` once the quotes go: not an option journalctl has, so asked too.
      { command: 'journalctl --vacuu""um-size=1K', reason: 'not read-only: `--vacuuum-size=1K` is not an option journalctl is known to have' },
      { command: 'journalctl --rot', reason: 'not read-only: `--rot` is `--rotate`, which rotates the journal files' },
    ];
    hearth.llm.script({ toolCalls: asked.map(({ command }) => terminal(command)) }, { content: 'Done.' });
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Tidy up the logs.' });

    // The calls of one answer run side by side, so their questions come in any order.
    for (let count = 0; count < asked.length; count++) {
      const required = await socket.next('approval_required');
      const expected = asked.find(({ command }) => command === required.subject);
      expect(required).toMatchObject({ tool: 'terminal', reason: 'rule terminal', not_read_only: expected?.reason.replace('not read-only: ', '') });
      socket.send({ type: 'approve', call_id: required.call_id, decision: 'deny' });
    }
    await socket.next('stream_end');
    socket.close();
    for (const called of socket.ofType('tool_call')) expect(called).toMatchObject({ success: false, result: expect.stringContaining('The person denied this call') });
    expect(socket.ofType('tool_call')).toHaveLength(asked.length);
    expect(await readFile(target, 'utf8')).toBe('keep me\n');

    const { body } = await hearth.request('GET', `/approvals?status=all&session_id=${sessionId}`);
    expect(body.approvals.map((row: { subject: string; decision: string; by: string }) => [row.subject, row.decision, row.by]).sort()).toEqual(
      asked.map(({ command }) => [command, 'deny', 'user']).sort(),
    );
  });

  it('runs ps aux and df -h at once, allowed by terminal(readonly)', async () => {
    const sessionId = await hearth.createSession('server_admin');
    hearth.llm.script({ toolCalls: [terminal('ps aux'), terminal('df -h')] }, { content: 'Looked.' });
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'How is the machine?' });
    await socket.next('stream_end');
    socket.close();
    expect(socket.ofType('approval_required')).toEqual([]);
    const [processes, disks] = socket.ofType('tool_call');
    expect(processes).toMatchObject({ success: true, result: expect.stringContaining('PID') });
    expect(disks).toMatchObject({ success: true, result: expect.stringContaining('Filesystem') });
    const { body } = await hearth.request('GET', `/approvals?status=all&session_id=${sessionId}`);
    expect(body.approvals.map((row: { subject: string; rule: string; by: string }) => [row.subject, row.rule, row.by]).sort()).toEqual([
      ['df -h', 'terminal(readonly)', 'rule'],
      ['ps aux', 'terminal(readonly)', 'rule'],
    ]);
  });

  it('asks before a pipe into a writing command, and says which stage writes', async () => {
    const sessionId = await hearth.createSession('server_admin');
    const written = path.join(hearth.config.SESSION_FILES_DIR, sessionId, 'copy.txt');
    hearth.llm.script({ toolCalls: [terminal('ps aux | tee copy.txt'), terminal('ps aux | tail -5')] }, { content: 'Done.' });
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Save the process list.' });
    const required = await socket.next('approval_required');
    expect(required).toMatchObject({ subject: 'ps aux | tee copy.txt', not_read_only: '`tee` writes files' });
    socket.send({ type: 'approve', call_id: required.call_id, decision: 'deny' });
    await socket.next('stream_end');
    socket.close();
    const [teed, tailed] = socket.ofType('tool_call');
    expect(teed).toMatchObject({ success: false });
    expect(existsSync(written)).toBe(false);
    expect(tailed).toMatchObject({ success: true });
    expect(socket.ofType('approval_required')).toHaveLength(1);
  });
});
