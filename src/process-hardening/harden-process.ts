import { closeSync, fstatSync, readlinkSync, readSync, writeSync } from 'node:fs';
import {
  environmentDescriptorVariable,
  execEnvironmentNames,
  isKeptInExecEnvironment,
  restartEnvironment,
} from './exec-environment.ts';
import { libc, type Libc } from './libc.ts';

/**
 * Closing Hearth's own process to the other processes of its user (docs/security.md, *Hearth's own process*).
 *
 * `/proc/<pid>/environ` shows the environment a process was started with, whatever it deletes
 * from `process.env` later. So when that environment holds anything beyond the harmless names
 * (exec-environment.ts), Hearth starts itself again in place with execve — same PID, same
 * argv, so npm or systemd above it see the same child — with only those names and
 * HEARTH_ENVIRONMENT_FD, the number of a memfd that carries the whole environment. The new
 * process reads it back into `process.env` (memory only) and closes it. Then
 * prctl(PR_SET_DUMPABLE, 0) makes `/proc/<pid>/environ`, `cwd`, `root`, `fd` and `mem` root's,
 * closed to processes of the same user. The children Hearth starts are dumpable again once they exec.
 */

export interface ProcessHardening {
  /** Whether processes of the same user can read this process's environ, cwd, root, fd and mem. */
  dumpable: boolean;
  /** Whether `/proc/<pid>/environ` shows variables beyond the harmless ones, any of which may be a secret. */
  secretsInExecEnvironment: boolean;
}

export interface HardeningReport extends ProcessHardening {
  /** Why Hearth could not harden itself fully; empty when it could. */
  problems: string[];
}

export class EnvironmentRestoreError extends Error {
  override name = 'EnvironmentRestoreError';
}

const memoryFileName = 'hearth-environment';

let secretsAtStart: boolean | undefined;

/**
 * Run first in src/main.ts, before the rest of the server is loaded. Either never returns (the
 * process goes on as its restarted self) or reports what it achieved. Throws
 * EnvironmentRestoreError when a restarted process cannot read its environment back: going on
 * without it could mean going on without AUTH_TOKEN.
 */
export function hardenProcess(): HardeningReport {
  const problems: string[] = [];
  // Read before the process turns non-dumpable: then its own environ is root's too.
  const names = execEnvironmentNames();
  const library = libc();
  if (typeof library === 'string') problems.push(library);
  const descriptor = process.env[environmentDescriptorVariable];
  const beyondKept = (names ?? []).filter((name) => name !== environmentDescriptorVariable && !isKeptInExecEnvironment(name));
  if (descriptor !== undefined) restoreEnvironment(descriptor);
  else if (beyondKept.length > 0) {
    const reason = restartWithoutSecrets(library);
    problems.push(`its exec environment keeps ${beyondKept.length} variables besides the harmless ones, any of which may be a secret: ${reason}`);
  }
  // Only the process that stays: one that restarted itself above is gone, and the restarted one comes here again.
  if (typeof library !== 'string') {
    const failure = library.makeNonDumpable();
    if (failure) problems.push(failure);
  }
  secretsAtStart = descriptor === undefined && beyondKept.length > 0;
  return { ...processHardeningState(), problems };
}

/** This process's state now; in a process that never ran hardenProcess (tests) as it is. */
export function processHardeningState(): ProcessHardening {
  const library = libc();
  const beyondKept = () => (execEnvironmentNames() ?? []).some((name) => !isKeptInExecEnvironment(name));
  return {
    dumpable: typeof library === 'string' || library.isDumpable(),
    secretsInExecEnvironment: secretsAtStart ?? beyondKept(),
  };
}

/** Returns only when the restart could not happen, saying why. */
function restartWithoutSecrets(library: Libc | string): string {
  if (typeof library === 'string') return 'no execve without libc';
  // An IPC channel (a parent that forked Hearth, `tsx watch`) would not survive the restart.
  if (process.channel) return 'it was started with an IPC channel, which a restart would break';
  const descriptor = library.createInheritableMemoryFile(memoryFileName);
  if (typeof descriptor === 'string') return descriptor;
  writeSync(descriptor, JSON.stringify(process.env));
  const argv = [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
  const failure = library.execute(process.execPath, argv, restartEnvironment(process.env, descriptor));
  closeSync(descriptor);
  return failure;
}

function restoreEnvironment(descriptorText: string): void {
  delete process.env[environmentDescriptorVariable];
  const descriptor = Number(descriptorText);
  // Only the memfd restartWithoutSecrets made is read (and closed), never a descriptor of node's own.
  if (!/^\d+$/.test(descriptorText) || fileNameOf(descriptor) !== `/memfd:${memoryFileName} (deleted)`) {
    throw new EnvironmentRestoreError(`${environmentDescriptorVariable}=${descriptorText} does not name the descriptor Hearth passes to itself when it restarts`);
  }
  let environment: unknown;
  try {
    const content = Buffer.alloc(fstatSync(descriptor).size);
    readSync(descriptor, content, 0, content.length, 0);
    environment = JSON.parse(content.toString('utf8'));
  } catch (error) {
    throw new EnvironmentRestoreError(`cannot read the environment back from descriptor ${descriptor}: ${(error as Error).message}`);
  } finally {
    closeSync(descriptor);
  }
  if (typeof environment !== 'object' || environment === null) {
    throw new EnvironmentRestoreError(`descriptor ${descriptor} does not hold an environment`);
  }
  for (const [name, value] of Object.entries(environment)) if (typeof value === 'string') process.env[name] = value;
}

function fileNameOf(descriptor: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${descriptor}`);
  } catch {
    return undefined;
  }
}
