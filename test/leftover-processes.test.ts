// The global teardown's judgement of which running processes the test run left behind (issue 34):
// an orphan carrying the run's id is the run's; an orphan without it (the person's own program,
// started meanwhile) is not, nor is anything that ran before the run began.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { processHasEnded } from './support/processes.ts';
import { allProcesses, leftovers } from './support/leftover-processes-setup.ts';
import { waitUntil } from './support/wait-until.ts';

const orphans: number[] = [];

afterEach(() => {
  for (const pid of orphans.splice(0)) if (!processHasEnded(pid)) process.kill(pid, 'SIGKILL');
});

/** A `sleep` whose parent has exited (reparented to init or a subreaper), started with `environment`. */
async function orphanedSleep(environment: NodeJS.ProcessEnv): Promise<number> {
  const shell = spawn('/bin/sh', ['-c', 'sleep 120 >/dev/null 2>&1 & echo $!'], { env: environment, stdio: ['ignore', 'pipe', 'ignore'] });
  let output = '';
  shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise((resolve) => shell.once('close', resolve));
  const pid = Number(output.trim());
  orphans.push(pid);
  // Reparented once its shell has gone.
  await waitUntil(async () => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== shell.pid;
  });
  return pid;
}

describe('the processes a test run leaves behind', () => {
  const runId = 'feedc0ffee123456';
  const before = () => new Set(allProcesses().map((facts) => `${facts.pid}:${facts.startTime}`));

  it("counts an orphan carrying the run's id, and not one without it", async () => {
    const start = before();
    const ours = await orphanedSleep({ PATH: process.env.PATH, HEARTH_TEST_RUN: runId });
    const theirs = await orphanedSleep({ PATH: process.env.PATH });
    const found = leftovers(runId, start, undefined).map((facts) => facts.pid);
    expect(found).toContain(ours);
    expect(found).not.toContain(theirs);
  });

  it('counts an orphan a jail left (a Hearth process marker), and nothing that ran before the run began', async () => {
    const marked = await orphanedSleep({ PATH: process.env.PATH, HEARTH_PROCESS: '0123456789abcdef:session:call' });
    expect(leftovers(runId, before(), undefined).map((facts) => facts.pid)).not.toContain(marked);
    const start = before();
    start.delete([...start].find((entry) => entry.startsWith(`${marked}:`))!);
    expect(leftovers(runId, start, undefined).map((facts) => facts.pid)).toContain(marked);
  });
});
