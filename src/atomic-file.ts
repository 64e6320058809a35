import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes `target` whole or not at all: the text goes to a staged file that is then renamed over it,
 * so a reader (or a watcher) never sees half of it. The staged file sits in `stagingFolder` (made if
 * missing; on the same file system as the target), beside the target by default, and is gone afterwards.
 */
export async function writeFileAtomically(target: string, contents: string, stagingFolder = path.dirname(target)): Promise<void> {
  await mkdir(stagingFolder, { recursive: true });
  const staged = path.join(stagingFolder, `.${path.basename(target)}.${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(staged, contents);
    await rename(staged, target);
  } finally {
    await rm(staged, { force: true });
  }
}
