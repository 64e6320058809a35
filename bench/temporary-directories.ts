// Every temp directory a scenario makes, so bench/run.ts can remove whatever a failed or
// interrupted scenario left behind (as child-processes.ts does for child processes).
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const directories = new Set<string>();

export async function makeTemporaryDirectory(prefix: string): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), prefix));
  directories.add(directory);
  return directory;
}

export async function removeTemporaryDirectory(directory: string): Promise<void> {
  directories.delete(directory);
  await rm(directory, { recursive: true, force: true });
}

export async function removeTemporaryDirectories(): Promise<void> {
  await Promise.all([...directories].map(removeTemporaryDirectory));
}

// Last resort, e.g. after an uncaught exception.
process.once('exit', () => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});
