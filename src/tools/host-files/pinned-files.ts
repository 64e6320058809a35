import { constants } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';

/**
 * Opening exactly the file the path policy decided on. The policy decides on a real path (links
 * resolved) and on identities; between that decision and the open, a folder on the way could be
 * swapped for a link. So the decided path is opened without following a link at its end
 * (O_NOFOLLOW), the kernel is asked where the descriptor really is (`/proc/self/fd/<fd>`), and
 * its device and inode must be the decided ones. Everything after works through the descriptor;
 * new names are made inside an opened folder through `/proc/self/fd/<fd>/<name>`, which the
 * kernel resolves to that very folder whatever happens to its path meanwhile.
 */
export interface Identity {
  dev: bigint;
  ino: bigint;
}

/** Thrown when what is opened is not what was decided on: a link or another file took its place meanwhile. */
export class ChangedWhileChecked extends Error {
  constructor(readonly real: string) {
    super(`${real} changed while it was being checked (a link or another file took its place)`);
  }
}

// Never blocks on a pipe put in a file's place; libuv adds O_CLOEXEC itself.
const nonBlocking = constants.O_NONBLOCK | constants.O_NOFOLLOW;
export const readFlags = constants.O_RDONLY | nonBlocking;
export const writeFlags = constants.O_WRONLY | nonBlocking;
export const appendFlags = constants.O_WRONLY | constants.O_APPEND | nonBlocking;
/** A new file only: never an existing one, never through a link. */
export const createFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | nonBlocking;
const folderFlags = constants.O_RDONLY | constants.O_DIRECTORY | nonBlocking;

export function sameIdentity(left: Identity | undefined, right: Identity | undefined): boolean {
  return left !== undefined && right !== undefined && left.dev === right.dev && left.ino === right.ino;
}

/** The path of `name` inside an opened folder, resolved by the kernel through the descriptor. */
export function inside(folder: FileHandle, name: string): string {
  return `/proc/self/fd/${folder.fd}/${name}`;
}

/**
 * Opens `real` (a path with no links in it) and checks the descriptor is `real` itself, and the
 * file of `expected` when given; closes it and throws ChangedWhileChecked otherwise.
 */
export async function openPinned(real: string, flags: number, expected?: Identity, mode?: number): Promise<FileHandle> {
  const handle = await fs.open(real, flags, mode).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ELOOP' ? new ChangedWhileChecked(real) : error;
  });
  return verified(handle, real, expected);
}

export function openPinnedFolder(real: string, expected?: Identity): Promise<FileHandle> {
  return openPinned(real, folderFlags, expected);
}

/** Opens `name` inside an opened folder (`folderReal` is that folder's real path), with the same checks. */
export async function openInside(folder: FileHandle, folderReal: string, name: string, flags: number, expected?: Identity): Promise<FileHandle> {
  const real = folderReal === '/' ? `/${name}` : `${folderReal}/${name}`;
  const handle = await fs.open(inside(folder, name), flags, 0o666).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ELOOP' ? new ChangedWhileChecked(real) : error;
  });
  return verified(handle, real, expected);
}

export function openFolderInside(folder: FileHandle, folderReal: string, name: string, expected?: Identity): Promise<FileHandle> {
  return openInside(folder, folderReal, name, folderFlags, expected);
}

async function verified(handle: FileHandle, real: string, expected: Identity | undefined): Promise<FileHandle> {
  try {
    const [location, stats] = await Promise.all([fs.readlink(`/proc/self/fd/${handle.fd}`), handle.stat({ bigint: true })]);
    if (location !== real || (expected !== undefined && !sameIdentity(stats, expected))) throw new ChangedWhileChecked(real);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}
