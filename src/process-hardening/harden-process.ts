import { execEnvironmentNames, isKeptInExecEnvironment, moveOutOfExecEnvironment } from './exec-environment.ts';
import { libc } from './libc.ts';

/**
 * Closing Hearth's own process to the other processes of its user (docs/security.md, *Hearth's own process*).
 *
 * `/proc/<pid>/environ` shows the bytes of the environment a process was started with, whatever
 * it deletes from `process.env` later. So every variable beyond the harmless names
 * (exec-environment.ts) is moved out of those bytes into the process's heap, and the bytes are
 * zeroed. Then prctl(PR_SET_DUMPABLE, 0) makes `/proc/<pid>/environ`, `cwd`, `root`, `fd` and
 * `mem` root's, closed to processes of the same user. The children Hearth starts are dumpable
 * again once they exec.
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

let secretsAtStart: boolean | undefined;

/** Run first in src/main.ts, before the rest of the server is loaded; reports what it achieved. */
export function hardenProcess(): HardeningReport {
  const problems: string[] = [];
  const moved = moveOutOfExecEnvironment();
  if ('problem' in moved) problems.push(`its exec environment keeps variables besides the harmless ones, any of which may be a secret: ${moved.problem}`);
  // Read before the process turns non-dumpable: then its own environ is root's too.
  secretsAtStart = hasSecretsInExecEnvironment();
  const library = libc();
  if (typeof library === 'string') problems.push(library);
  else {
    const failure = library.makeNonDumpable();
    if (failure) problems.push(failure);
  }
  return { ...processHardeningState(), problems };
}

/** This process's state now; in a process that never ran hardenProcess (tests) as it is. */
export function processHardeningState(): ProcessHardening {
  const library = libc();
  return {
    dumpable: typeof library === 'string' || library.isDumpable(),
    secretsInExecEnvironment: secretsAtStart ?? hasSecretsInExecEnvironment(),
  };
}

function hasSecretsInExecEnvironment(): boolean {
  return (execEnvironmentNames() ?? []).some((name) => !isKeptInExecEnvironment(name));
}
