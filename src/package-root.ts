import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder Hearth is installed in: the nearest one above this module holding package.json.
 * Found by walking up rather than by a fixed `..` count, since this module runs both as
 * `src/package-root.ts` (tsx, tests) and bundled into `dist/main.js` (npm start).
 */
function findPackageRoot(start: string): string {
  for (let folder = start; ; folder = path.dirname(folder)) {
    if (existsSync(path.join(folder, 'package.json'))) return folder;
    if (path.dirname(folder) === folder) throw new Error(`no package.json above ${start}`);
  }
}

export const packageRoot = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A file shipped with Hearth, by its path in the checkout (`public`, `src/tools/…/host-process.mjs`). */
export function packagePath(...segments: string[]): string {
  return path.join(packageRoot, ...segments);
}
