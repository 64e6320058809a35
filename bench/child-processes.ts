// Every child the bench starts, so none outlives it: not on failure, not mid-start, not on Ctrl-C.
import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();

export function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** Last resort once graceful stops are done or impossible. */
export function killRemainingChildren(): void {
  for (const child of running) child.kill('SIGKILL');
}

process.once('exit', killRemainingChildren);
