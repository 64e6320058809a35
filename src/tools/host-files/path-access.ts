import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Absolute folders a tool may touch besides the work folder, or "anywhere" for FS_ALLOWED_PATHS=*. */
export type AllowedRoots = readonly string[] | 'anywhere';

export interface PathAccessOptions {
  workFolder: string;
  allowedRoots: AllowedRoots;
  /** When false, a symbolic link at the end of the path is the target itself (deleting it removes the link). */
  followFinalLink?: boolean;
}

export type PathAccess = { ok: true; path: string; root: string } | { ok: false; message: string };

const maximumLinkDepth = 40;

/** Parses FS_ALLOWED_PATHS: comma-separated roots, relative ones taken from the server's folder; `*` means anywhere. */
export function parseAllowedRoots(setting: string): AllowedRoots {
  const entries = setting.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.includes('*')) return 'anywhere';
  return entries.map((entry) => path.resolve(expandHome(entry)));
}

/**
 * Resolves a requested path (relative ones inside the work folder) to its real location, following
 * symbolic links and `..`, and accepts it only when that location lies in the work folder or an allowed root.
 */
export async function resolveAllowedPath(requested: string, options: PathAccessOptions): Promise<PathAccess> {
  const workFolder = await realpathAllowingMissing(options.workFolder);
  const lexical = path.resolve(workFolder, expandHome(requested.trim()));
  let real: string;
  try {
    real = options.followFinalLink === false && lexical !== path.parse(lexical).root
      ? path.join(await realpathAllowingMissing(path.dirname(lexical)), path.basename(lexical))
      : await realpathAllowingMissing(lexical);
  } catch (error) {
    return { ok: false, message: `Cannot resolve ${requested}: ${(error as Error).message}` };
  }
  const roots = options.allowedRoots === 'anywhere'
    ? [workFolder, path.parse(real).root]
    : [workFolder, ...(await Promise.all(options.allowedRoots.map((root) => realpathAllowingMissing(root))))];
  const root = roots.find((candidate) => isInside(candidate, real));
  if (root !== undefined) return { ok: true, path: real, root };
  const allowed = options.allowedRoots === 'anywhere' ? '' : options.allowedRoots.join(', ');
  const shown = path.isAbsolute(requested.trim()) && real === lexical ? '' : ` (it leads to ${real})`;
  return {
    ok: false,
    message: `Access to ${requested} is refused${shown}: only the work folder${allowed ? ` and ${allowed}` : ''} may be used.`,
  };
}

/** True when `candidate` is `root` or lies beneath it; `/data2` is not inside `/data`. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function expandHome(requested: string): string {
  if (requested === '~') return os.homedir();
  if (requested.startsWith('~/')) return path.join(os.homedir(), requested.slice(2));
  return requested;
}

/** Like fs.realpath, but a path that does not exist yet keeps its missing tail under the real location of what does exist. */
export async function realpathAllowingMissing(target: string, depth = 0): Promise<string> {
  try {
    return await fs.realpath(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const parent = path.dirname(target);
  if (parent === target) return target;
  const realParent = await realpathAllowingMissing(parent, depth);
  const linkTarget = await fs.readlink(path.join(realParent, path.basename(target))).catch(() => undefined);
  // A dangling link would otherwise let a write create its target wherever it points.
  if (linkTarget !== undefined) {
    if (depth >= maximumLinkDepth) throw new Error('too many levels of symbolic links');
    return realpathAllowingMissing(path.resolve(realParent, linkTarget), depth + 1);
  }
  return path.join(realParent, path.basename(target));
}
