import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isInside, realpathAllowingMissing } from '../host-files/path-access.ts';
import type { ToolPermission } from './protocol.ts';

/** What one host process may do besides reading its own script and its modules' folders. */
export interface Sandbox {
  /** The one folder it may write to (and read); its working folder. None: it writes nowhere. */
  workFolder?: string;
  /** Other folders or files it may read. */
  read?: readonly string[];
  /** Granted permissions: `--allow-child-process`, `--allow-worker`. */
  permissions?: readonly ToolPermission[];
}

export interface HeapLimits {
  /** --max-old-space-size. */
  maxOldGenerationSizeMb?: number;
  /** Turned into --max-semi-space-size (a third of it: V8's young generation is three semi-spaces). */
  maxYoungGenerationSizeMb?: number;
}

/**
 * Node's flag for the permission model: `--permission` where it is stable (22.13+, 23.5+),
 * `--experimental-permission` before.
 */
export function permissionModelFlag(version: string = process.versions.node): string {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const stable = major >= 24 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13);
  return stable ? '--permission' : '--experimental-permission';
}

/**
 * The `node_modules` folders a module in `folder` resolves packages from (the folder and each
 * parent), those that exist: bundles keep package imports, so the host must read them.
 */
export async function packageFolders(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (let current = path.resolve(folder); ; current = path.dirname(current)) {
    const candidate = path.join(current, 'node_modules');
    if (await isFolder(candidate)) found.push(candidate);
    if (path.dirname(current) === current) return found;
  }
}

async function isFolder(candidate: string): Promise<boolean> {
  try {
    return (await stat(candidate)).isDirectory();
  } catch {
    return false;
  }
}

/** The path and, when a symbolic link lies on its way, its real path too: Node checks the path it is given. */
async function withRealPath(file: string): Promise<string[]> {
  const resolved = path.resolve(file);
  const real = await realpath(resolved).catch(() => resolved);
  return real === resolved ? [resolved] : [resolved, real];
}

/** Node's command-line flags for a host: the permission model with exactly the sandbox's grants, and heap limits. */
export async function sandboxFlags(script: string, moduleFolders: readonly string[], sandbox: Sandbox, limits: HeapLimits): Promise<string[]> {
  const readable = new Set<string>();
  for (const entry of [script, ...moduleFolders, ...(sandbox.read ?? []), ...(sandbox.workFolder ? [sandbox.workFolder] : [])]) {
    for (const granted of await withRealPath(entry)) readable.add(granted);
  }
  const writable = sandbox.workFolder ? await withRealPath(sandbox.workFolder) : [];
  const permissions = sandbox.permissions ?? [];
  const flags = [
    permissionModelFlag(),
    // One flag per path: Node 20.20 no longer splits a comma-separated list.
    ...[...readable].map((entry) => `--allow-fs-read=${entry}`),
    ...writable.map((entry) => `--allow-fs-write=${entry}`),
    ...(permissions.includes('childProcess') ? ['--allow-child-process'] : []),
    ...(permissions.includes('worker') ? ['--allow-worker'] : []),
    // Node 25's permission model also covers the network; user tools may use it (docs/security.md).
    ...(process.allowedNodeEnvironmentFlags.has('--allow-net') ? ['--allow-net'] : []),
    // The permission model's "experimental" and "use with caution" notes are for the person, in docs/security.md.
    '--disable-warning=ExperimentalWarning',
    '--disable-warning=SecurityWarning',
  ];
  if (limits.maxOldGenerationSizeMb) flags.push(`--max-old-space-size=${limits.maxOldGenerationSizeMb}`);
  if (limits.maxYoungGenerationSizeMb) flags.push(`--max-semi-space-size=${Math.max(1, Math.round(limits.maxYoungGenerationSizeMb / 3))}`);
  return flags;
}

export interface EscapingLink {
  /** Its path, relative to the folder. */
  link: string;
  /** Where a symbolic link leads, or that a file has other (hard) links. */
  target: string;
}

/**
 * Watches a session's folder for links through which a host could reach outside it. Node's
 * permission model checks the path a tool names and then follows symbolic links (documented),
 * and a hard link is the file itself; the sandboxed tools cannot make either, but other tools
 * or the person can. Symbolic links that stay inside the folder are fine; a regular file with
 * more than one name is counted, since where its other names live cannot be known.
 *
 * The first check reads the whole tree; later ones stat each folder it knows and read again only
 * those whose modification time changed (adding, removing or renaming an entry changes its
 * folder's), so a call in a large folder costs one stat per folder.
 */
export class LinkScan {
  private root: string | undefined;
  /** Folder → its modification time (taken before it was read) and the links found in it. */
  private readonly folders = new Map<string, { mtimeNs: bigint; links: EscapingLink[] }>();

  constructor(private readonly folder: string) {}

  async check(): Promise<EscapingLink[]> {
    this.root ??= await realpath(this.folder);
    if (this.folders.size === 0) {
      await this.read(this.root);
    } else {
      const known = [...this.folders.entries()];
      const now = await Promise.all(known.map(([folder]) => lstat(folder, { bigint: true }).catch(() => undefined)));
      for (const [index, [folder, seen]] of known.entries()) {
        if (!this.folders.has(folder)) continue;
        const stats = now[index];
        if (!stats?.isDirectory()) this.forget(folder);
        else if (stats.mtimeNs !== seen.mtimeNs) await this.read(folder, stats.mtimeNs);
      }
      if (!this.folders.has(this.root)) await this.read(this.root);
    }
    return [...this.folders.values()].flatMap((entry) => entry.links);
  }

  /** Reads one folder (its time first, so a change made while reading shows next time) and the new folders in it. */
  private async read(folder: string, mtimeNs?: bigint): Promise<void> {
    const root = this.root!;
    const time = mtimeNs ?? (await lstat(folder, { bigint: true })).mtimeNs;
    const entries = await readdir(folder, { withFileTypes: true });
    const subfolders: string[] = [];
    const found = await Promise.all(
      entries.map(async (entry): Promise<EscapingLink | undefined> => {
        const full = path.join(folder, entry.name);
        const link = path.relative(root, full);
        if (entry.isDirectory()) {
          subfolders.push(full);
          return undefined;
        }
        if (entry.isSymbolicLink()) {
          const target = await realpathAllowingMissing(full).catch(() => '(a loop of links)');
          return isInside(root, target) ? undefined : { link, target };
        }
        if (!entry.isFile()) return undefined;
        const { nlink } = await lstat(full).catch(() => ({ nlink: 1 }));
        return nlink > 1 ? { link, target: `(a hard link: the file has ${nlink} names)` } : undefined;
      }),
    );
    // Folders that were here and are gone (or are no longer folders) go with everything under them.
    const present = new Set(subfolders);
    for (const known of [...this.folders.keys()]) {
      if (path.dirname(known) === folder && !present.has(known)) this.forget(known);
    }
    this.folders.set(folder, { mtimeNs: time, links: found.filter((entry): entry is EscapingLink => entry !== undefined) });
    for (const subfolder of subfolders) if (!this.folders.has(subfolder)) await this.read(subfolder);
  }

  private forget(folder: string): void {
    for (const known of [...this.folders.keys()]) if (isInside(folder, known)) this.folders.delete(known);
  }
}
