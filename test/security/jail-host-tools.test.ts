// Issue 23: the host jail keeps a server admin's everyday commands working. There is no systemd
// on a CI machine, so `systemctl` and `journalctl` must fail there the same way inside the jail
// as outside it (same exit code, same kind of message), not differently because of the jail.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import { callTools, startJailedHearth, type JailedHearth } from './jail-harness.ts';

let hearth: JailedHearth;
let socket: EventSocket;
/** A host process that is nothing of Hearth's: `ps` in the host jail must list it. */
let neighbour: ChildProcess;

beforeAll(async () => {
  neighbour = spawn('sleep', ['3017'], { stdio: 'ignore' });
  hearth = await startJailedHearth();
  socket = await hearth.connect(await hearth.createSession('server_admin'));
}, 90_000);
afterAll(async () => {
  socket?.close();
  await hearth?.close();
  neighbour.kill();
});

function outside(command: string): { exitCode: number; output: string } {
  const result = spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8' });
  return { exitCode: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

/** The exit code the terminal tool reports (`Exit code N in …`), 0 when it says none. */
function exitCodeOf(result: string): number {
  return Number(/^Exit code (\d+)/m.exec(result)?.[1] ?? 0);
}

describe("server_admin's everyday commands in the host jail", () => {
  it('ps aux lists the host processes and df -h the file systems, without asking', async () => {
    const [ps, df, neighbourLine] = await callTools(hearth, socket, [
      { name: 'terminal', arguments: { command: 'ps aux' } },
      { name: 'terminal', arguments: { command: 'df -h' } },
      // ps aux on a busy machine can pass the tool's output limit and lose a line: the neighbour is also asked for by pid.
      { name: 'terminal', arguments: { command: `ps -o pid=,args= -p ${neighbour.pid}` } },
    ]);
    expect(socket.ofType('approval_required')).toHaveLength(0);
    expect(ps!.success, ps!.result).toBe(true);
    expect(ps!.result).toMatch(/USER\s+PID/);
    // Another host process is listed; Hearth (and the processes above it) are not.
    expect(neighbourLine!.result).toMatch(new RegExp(`\\s${neighbour.pid}\\s+sleep 3017`));
    expect(ps!.result).not.toMatch(new RegExp(`^\\S+\\s+${hearth.pid}\\s`, 'm'));
    expect(df!.success, df!.result).toBe(true);
    expect(df!.result).toMatch(/Filesystem\s+Size\s+Used/);
  });

  for (const command of ['systemctl status', 'journalctl -n 5 --no-pager']) {
    it(`${command} behaves as it does outside the jail`, async () => {
      const [result] = await callTools(hearth, socket, [{ name: 'terminal', arguments: { command } }]);
      const expected = outside(command);
      expect(exitCodeOf(result!.result), result!.result).toBe(expected.exitCode);
      if (expected.exitCode === 0) expect(result!.success).toBe(true);
      else {
        // The first line of the complaint, e.g. "System has not been booted with systemd…" or "No journal files were found."
        const firstLine = expected.output.trim().split('\n')[0]!.replace(/\d+/g, '');
        expect(result!.result.replace(/\d+/g, '')).toContain(firstLine);
      }
    });
  }
});
