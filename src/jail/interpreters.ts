import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';

/** An installation outside the system folders (node from nvm, python from pyenv) that a strict jail must show. */
function installationFolder(executable: string): string | undefined {
  const folder = path.dirname(path.dirname(executable));
  return folder === '/' || folder === '/usr' || folder.startsWith('/usr/') ? undefined : folder;
}

let nodeFolder: string | undefined | null = null;

/** Folders a jail must show so that the Node.js running Hearth (and its npm, npx) runs inside it too. */
export function interpreterFolders(): string[] {
  if (nodeFolder === null) {
    let real = process.execPath;
    try {
      real = realpathSync(process.execPath);
    } catch {
      // The path as given, then.
    }
    nodeFolder = installationFolder(real);
  }
  return nodeFolder === undefined ? [] : [nodeFolder];
}

export interface PythonInstallation {
  /** The interpreter itself, not a shim (pyenv's shims need the shim's own folders and HOME). */
  executable: string;
  folders: string[];
}

const pythons = new Map<string, Promise<PythonInstallation | undefined>>();

/** Where `python3` really lives, asked of the interpreter once; undefined when it is not installed. */
export function pythonInstallation(command: string): Promise<PythonInstallation | undefined> {
  let found = pythons.get(command);
  if (found === undefined) {
    found = new Promise((resolve) => {
      // PATH only: Hearth's environment holds its secrets, and this is one of its children.
      const env = process.env.PATH === undefined ? {} : { PATH: process.env.PATH };
      execFile(command, ['-c', 'import sys; print(sys.executable); print(sys.base_prefix)'], { timeout: 10_000, env }, (error, stdout) => {
        const [executable, prefix] = stdout.trim().split('\n');
        if (error || !executable || !prefix) return resolve(undefined);
        const folders = [prefix, installationFolder(executable)].filter((folder): folder is string => folder !== undefined && installationFolder(path.join(folder, 'bin', 'x')) !== undefined);
        resolve({ executable, folders: [...new Set(folders)] });
      });
    });
    pythons.set(command, found);
  }
  return found;
}
