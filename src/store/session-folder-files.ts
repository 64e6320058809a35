import { constants } from 'node:fs';
import { lstat, open, readdir, readlink, realpath, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** A file in a session's folder, named by its path inside it (`notes.txt`, `out/report.csv`). */
export interface FolderFile {
  name: string;
  size: number;
  modifiedAt: string;
}

export interface OpenedFolderFile {
  handle: FileHandle;
  size: number;
}

/** A tool's work can hold a whole package tree: the list stops there. */
const maxListed = 1_000;
const maxDepth = 8;

/**
 * The regular files under a session's folder, newest first: uploads and what its tools wrote.
 * Links are never followed nor listed; hidden entries are left out.
 */
export async function listFolderFiles(folder: string): Promise<FolderFile[]> {
  const files: FolderFile[] = [];
  const walk = async (relative: string, depth: number): Promise<void> => {
    const entries = await readdir(path.join(folder, relative), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (files.length >= maxListed) return;
      // Hidden entries are the tools' own (code_exec's programs) and uploads still being received (`.upload-…`).
      if (entry.name.startsWith('.')) continue;
      const name = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory() && depth < maxDepth) await walk(name, depth + 1);
      if (!entry.isFile()) continue;
      const stats = await lstat(path.join(folder, name)).catch(() => undefined);
      if (stats?.isFile()) files.push({ name, size: stats.size, modifiedAt: stats.mtime.toISOString() });
    }
  };
  await walk('', 0);
  return files.sort((first, second) => second.modifiedAt.localeCompare(first.modifiedAt) || first.name.localeCompare(second.name));
}

/**
 * Opens a regular file of the folder for reading; undefined for a name that is none. A tool can
 * make links in its work folder, so the opened file's real path must lie inside the folder: a link,
 * as the file or as a folder on the way, never leads a download elsewhere.
 */
export async function openFolderFile(folder: string, name: string): Promise<OpenedFolderFile | undefined> {
  const parts = segmentsOf(name);
  if (!parts) return undefined;
  const inside = `${await realpath(folder)}${path.sep}`;
  // O_NONBLOCK: a FIFO a tool made would otherwise hold the request until something writes to it.
  const handle = await open(path.join(folder, ...parts), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return undefined;
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => '');
  const stats = await handle.stat();
  if (!real.startsWith(inside) || !stats.isFile()) {
    await handle.close();
    return undefined;
  }
  return { handle, size: stats.size };
}

/** Removes a regular file of the folder; false for a name that is none (a folder on the way that is a link leads nowhere). */
export async function removeFolderFile(folder: string, name: string): Promise<boolean> {
  const parts = segmentsOf(name);
  if (!parts) return false;
  const root = await realpath(folder);
  const parent = await realpath(path.join(folder, ...parts.slice(0, -1))).catch(() => undefined);
  if (parent === undefined || (parent !== root && !parent.startsWith(`${root}${path.sep}`))) return false;
  const target = path.join(parent, parts.at(-1)!);
  const stats = await lstat(target).catch(() => undefined);
  if (!stats?.isFile()) return false;
  await unlink(target);
  return true;
}

function segmentsOf(name: string): string[] | undefined {
  const parts = name.split('/');
  return parts.every((part) => part !== '' && part !== '.' && part !== '..' && !part.includes('\0')) ? parts : undefined;
}
