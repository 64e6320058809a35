import { readdirSync, readFileSync } from 'node:fs';

/**
 * Ending a jailed process with everything under it, never bubblewrap's outer process alone.
 *
 * bubblewrap's outer process clones the jail's first process (PID 1 of the jail's PID namespace)
 * and only then lets it go on; that process sets its own parent-death signal late, just before it
 * runs the command. Killing the outer process in between leaves it waiting forever for a go-ahead
 * that never comes, reparented to the machine's init, and as the init of its own namespace it
 * ignores every signal but SIGKILL. So the whole tree is frozen first (SIGSTOP: nothing in it can
 * start another process meanwhile), collected from `/proc/<pid>/task/<tid>/children`, and killed.
 * Killing a namespace's init ends everything in that namespace.
 */
export function endProcessTree(rootPid: number): void {
  const found: number[] = [];
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    if (found.includes(pid) || !signal(pid, 'SIGSTOP')) continue;
    found.push(pid);
    pending.push(...childrenOf(pid));
  }
  for (const pid of found) signal(pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    // Ended already.
    return false;
  }
}

/** The children of every thread of `pid` (a child belongs to the thread that started it); none once it has ended. */
function childrenOf(pid: number): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const thread of threads) {
    try {
      for (const word of readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').trim().split(' ')) if (word !== '') children.push(Number(word));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return children;
}
