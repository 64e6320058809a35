import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** The pid a test process wrote to `file` as `<pid>\n`, or undefined while the file is missing or not complete. */
export async function readPid(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return /^\d+\n$/.test(text) ? Number(text) : undefined;
}

/** An ended orphan stays a zombie until init reaps it, which some container inits do only every few seconds. */
export function processHasEnded(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const status = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return status.slice(status.lastIndexOf(')') + 2).startsWith('Z');
}
