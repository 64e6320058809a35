// Issue 34: "a jailed user-tool host (bwrap, parent 1) was left running and ignored SIGTERM".
// bubblewrap's outer process clones the jail's first process, then lets it go on; killed in
// between, it leaves that process waiting forever for the go-ahead, reparented to init, and as the
// init of its own PID namespace it ignores SIGTERM. Hearth killed the outer process alone when it
// ended a user-tool host or a stdio MCP server; `endProcessTree` ends the whole tree.
//
// `--userns-block-fd` holds the outer process at exactly that point (after it has cloned the jail,
// before the go-ahead) until the descriptor is written to, which the test never does.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endProcessTree } from '../../src/jail/process-tree.ts';
import { endLeftoverProcesses, hearthInstance, processMarkerVariable } from '../../src/tools/process-markers.ts';
import { processHasEnded } from '../support/processes.ts';
import { waitUntil } from '../support/wait-until.ts';

const started: ChildProcess[] = [];
const jailsLeft: number[] = [];

afterEach(() => {
  for (const pid of jailsLeft.splice(0)) if (!processHasEnded(pid)) process.kill(pid, 'SIGKILL');
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** bubblewrap held between cloning the jail and letting it run; resolves with the outer process and the jail's first process. */
async function heldJail(environment: NodeJS.ProcessEnv = { PATH: process.env.PATH }): Promise<{ outer: ChildProcess; jail: number }> {
  const outer = spawn(
    'bwrap',
    ['--unshare-user', '--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/', '--info-fd', '3', '--userns-block-fd', '4', 'sleep', '600'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], env: environment },
  );
  started.push(outer);
  let info = '';
  outer.stdio[3]!.on('data', (chunk: Buffer) => (info += chunk.toString()));
  const jail = await waitUntil(() => Number(/"child-pid":\s*(\d+)/.exec(info)?.[1]) || undefined);
  jailsLeft.push(jail);
  return { outer, jail };
}

async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('ending a jail that is still being set up', () => {
  it("SIGKILL to bubblewrap's outer process alone leaves the jail's first process behind, reparented and deaf to SIGTERM", async () => {
    const { outer, jail } = await heldJail();
    outer.kill('SIGKILL');
    await waitUntil(async () => (await parentOf(jail)) !== outer.pid);
    process.kill(jail, 'SIGTERM');
    // SIGTERM has been delivered (and ignored) once the signal is no longer pending; SIGKILL would end it at once.
    await waitUntil(async () => /^ShdPnd:\s*0+$/m.test(await readFile(`/proc/${jail}/status`, 'utf8')) && /^SigPnd:\s*0+$/m.test(await readFile(`/proc/${jail}/status`, 'utf8')));
    expect(processHasEnded(jail)).toBe(false);
  });

  it('endProcessTree ends the outer process and the jail with it', async () => {
    const { outer, jail } = await heldJail();
    endProcessTree(outer.pid!);
    await waitUntil(() => processHasEnded(jail) && (outer.exitCode !== null || outer.signalCode !== null));
    expect(outer.signalCode).toBe('SIGKILL');
  });

  it("the next start of the same Hearth ends such a jail by its marker (what a Hearth killed in between leaves)", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-held-jail-'));
    try {
      const marker = `${hearthInstance(dataDir)}:user-tools:host`;
      const { outer, jail } = await heldJail({ PATH: process.env.PATH, [processMarkerVariable]: marker });
      outer.kill('SIGKILL');
      await waitUntil(async () => (await parentOf(jail)) !== outer.pid);
      const quiet = { warn: () => undefined, debug: () => undefined };
      expect(await endLeftoverProcesses(dataDir, quiet)).toBeGreaterThanOrEqual(1);
      await waitUntil(() => processHasEnded(jail));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
