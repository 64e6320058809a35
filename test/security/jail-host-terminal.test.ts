// Issue 23, server_admin: the terminal runs in the host jail and the profile's own allow rules
// (`terminal(grep *)`, `terminal(cat *)`) let these commands run without asking. Each one read a
// secret or another session's message before the jail; now each must come back empty-handed.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import { callTools, expectNothingLeaked, startJailedHearth, storePrivateMessage, type JailedHearth } from './jail-harness.ts';

const privateMessage = 'the alarm code is 4711-Q';

let hearth: JailedHearth;
let socket: EventSocket;

beforeAll(async () => {
  hearth = await startJailedHearth();
  await storePrivateMessage(hearth, privateMessage);
  socket = await hearth.connect(await hearth.createSession('server_admin'));
}, 90_000);
afterAll(async () => {
  socket?.close();
  await hearth?.close();
});

const terminal = (command: string) => ({ name: 'terminal', arguments: { command } });

describe('the host jail of server_admin', () => {
  it('the attacks of issue 23 run under the allow rules and find nothing of Hearth', async () => {
    const fromRequest = hearth.llm.requests.length;
    const wal = path.join(hearth.dataDir, 'hearth.db-wal');
    const results = await callTools(hearth, socket, [
      terminal(`grep -a -o AUTH_TOKEN=[^[:cntrl:]]* /proc/${hearth.pid}/environ`),
      terminal(`cat /proc/${hearth.pid}/environ`),
      terminal(`cat /proc/${hearth.parentPid}/environ`),
      terminal(`grep -a PERSON_EXPORTED_SECRET /proc/${hearth.parentPid}/environ`),
      terminal(`cat ${path.join(hearth.projectDir, '.env')}`),
      terminal(`grep -a 'alarm code' ${wal}`),
      terminal(`grep -r -a 'alarm code' ${hearth.dataDir}`),
      terminal(`cat /proc/${hearth.pid}/cwd/.env`),
      terminal(`ls /proc/${hearth.pid}/fd`),
      // Every process the jail can see, threads included, and every root and working folder it can follow.
      terminal(`grep -a -s -o AUTH_TOKEN=[^[:cntrl:]]* /proc/[0-9]*/environ /proc/[0-9]*/task/[0-9]*/environ`),
      terminal(`grep -a -s 'alarm code' /proc/[0-9]*/root${wal} /proc/[0-9]*/cwd/.env /proc/[0-9]*/root${path.join(hearth.projectDir, '.env')}`),
    ], { allowAsked: true });
    expect(results).toHaveLength(11);
    // Read-only commands run unasked under terminal(readonly); the person allowed the rest (the wildcard sweeps).
    for (const result of results) expect(result.success, result.result).toBe(false);
    expectNothingLeaked(hearth, results, fromRequest, [privateMessage]);
    // The test could fail: outside the jail, the same files hold what the commands looked for.
    expect(spawnSync('grep', ['-a', '-c', 'alarm code', wal], { encoding: 'utf8' }).stdout.trim()).not.toBe('0');
    expect(spawnSync('cat', [`/proc/${hearth.parentPid}/environ`], { encoding: 'utf8' }).stdout).toContain(hearth.secrets.parent.PERSON_EXPORTED_SECRET);
  });
});
