import { accessSync, constants } from 'node:fs';
import path from 'node:path';

const searched = ['/usr/local/bin', '/usr/bin', '/bin'];

/** Whether a program is there to run: a path to an executable file, or a name found in the system's bin folders. */
export function installedProgram(program: string): boolean {
  const candidates = program.includes('/') ? [program] : searched.map((folder) => path.join(folder, program));
  return candidates.some((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
