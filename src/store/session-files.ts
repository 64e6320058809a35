import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { link, lstat, mkdir, readdir, rm, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const temporaryPrefix = '.upload-';
/** Below the usual 255-byte file-name limit, leaving room for a " (n)" suffix. */
const maxNameBytes = 200;
const maxExtensionBytes = 16;
const maxCopies = 10_000;
const sessionIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const hourMs = 3_600_000;

export interface SavedFile {
  name: string;
  /** Absolute path, what the agent's tools read. */
  path: string;
  size: number;
}

/** An upload written to a hidden temporary file of its folder, not yet visible under a name. */
export interface StagedUpload {
  size: number;
  /** Gives the file its safe, unused name; the temporary file is gone either way. */
  commit(clientName: string): Promise<SavedFile>;
  discard(): Promise<void>;
}

/**
 * The absolute folder of a session's files (uploads, and the tools' work folder), created when
 * missing. It must be a folder of its own: a link in its place would send uploads elsewhere.
 */
export async function sessionFolder(root: string, sessionId: string): Promise<string> {
  if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new Error(`Invalid session id for a files folder: ${sessionId}`);
  const folder = path.resolve(root, sessionId);
  await mkdir(folder, { recursive: true });
  if (!(await lstat(folder)).isDirectory()) throw new Error(`The files folder of session ${sessionId} is not a folder but a link or a file: ${folder}`);
  return folder;
}

/** Removes a session's files folder with everything in it (the session is deleted); nothing happens when there is none. */
export async function removeSessionFolder(root: string, sessionId: string): Promise<void> {
  if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new Error(`Invalid session id for a files folder: ${sessionId}`);
  await rm(path.resolve(root, sessionId), { recursive: true, force: true });
}

/**
 * A file name safe to create inside a folder: the client name's last path segment without
 * control characters or leading dots, clipped to a safe length with its extension kept; `file` when nothing is left.
 */
export function safeFileName(clientName: string): string {
  const base = clientName.split(/[\\/]/).pop() ?? '';
  const cleaned = base.replace(/\p{Cc}/gu, '').trim().replace(/^\.+/, '').trim();
  if (cleaned === '') return 'file';
  const extension = path.extname(cleaned);
  const kept = Buffer.byteLength(extension) <= maxExtensionBytes ? extension : '';
  const stem = cleaned.slice(0, cleaned.length - kept.length);
  return clipBytes(stem, maxNameBytes - Buffer.byteLength(kept)) + kept;
}

/** `name` for the first copy, then `stem (1).ext`, `stem (2).ext`… */
export function numberedName(name: string, copy: number): string {
  if (copy === 0) return name;
  const extension = path.extname(name);
  return `${name.slice(0, name.length - extension.length)} (${copy})${extension}`;
}

/** Streams an upload into `folder` under a temporary name; a stream that fails leaves nothing behind. */
export async function stageUpload(folder: string, stream: Readable): Promise<StagedUpload> {
  const temporary = path.join(folder, `${temporaryPrefix}${randomBytes(8).toString('hex')}`);
  const output = createWriteStream(temporary, { flags: 'wx' });
  try {
    await pipeline(stream, output);
  } catch (error) {
    // A stream destroyed while the file is still being opened would create it after the removal.
    await closed(output);
    await rm(temporary, { force: true });
    throw error;
  }
  const size = output.bytesWritten;
  return {
    size,
    async commit(clientName) {
      try {
        const name = await claimName(temporary, folder, safeFileName(clientName));
        return { name, path: path.join(folder, name), size };
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },
    discard: () => rm(temporary, { force: true }),
  };
}

/** Links the temporary file under the first free numbered name, then drops the temporary name. */
async function claimName(temporary: string, folder: string, name: string): Promise<string> {
  // link() never replaces an existing entry, so two uploads of one name at once still get two names.
  for (let copy = 0; copy < maxCopies; copy += 1) {
    const candidate = numberedName(name, copy);
    try {
      await link(temporary, path.join(folder, candidate));
    } catch (error) {
      if (errorCode(error) === 'EEXIST') continue;
      throw error;
    }
    await unlink(temporary);
    return candidate;
  }
  throw new Error(`No free name for ${name}: ${maxCopies} copies already exist.`);
}

export interface SweepOptions {
  /** SESSION_FILES_DIR. */
  dir: string;
  ttlHours: number;
  /** Read after the folder is listed, so a session created meanwhile never looks deleted. */
  knownSessionIds: () => Promise<Iterable<string>>;
  now?: number;
}

export interface SweepReport {
  filesRemoved: number;
  foldersRemoved: number;
  failures: { path: string; message: string }[];
}

/**
 * Removes files older than the TTL (by mtime, stale temporary uploads included) from the folders of
 * existing sessions, and the whole folders of sessions that no longer exist. A session's folder is kept
 * even when empty: tools use it as their work folder. Folders not named like a session id are not ours
 * and are left alone. Entries that cannot be removed are reported, never thrown.
 */
export async function sweepSessionFiles(options: SweepOptions): Promise<SweepReport> {
  const report: SweepReport = { filesRemoved: 0, foldersRemoved: 0, failures: [] };
  const cutoff = (options.now ?? Date.now()) - options.ttlHours * hourMs;
  const entries = await readdir(options.dir, { withFileTypes: true }).catch(ignoreMissing);
  if (entries === undefined) return report;
  const known = new Set(await options.knownSessionIds());
  for (const entry of entries) {
    if (!entry.isDirectory() || !sessionIdPattern.test(entry.name)) continue;
    const folder = path.join(options.dir, entry.name);
    if (known.has(entry.name)) {
      await removeOlderThan(folder, cutoff, report);
    } else {
      await attempt(folder, report, async () => {
        await rm(folder, { recursive: true, force: true });
        report.foldersRemoved += 1;
      });
    }
  }
  return report;
}

/** Removes the old files below `folder`, and sub-folders that were old and end up empty; true when `folder` is left empty. */
async function removeOlderThan(folder: string, cutoff: number, report: SweepReport): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true }).catch((error: unknown) => {
    if (errorCode(error) !== 'ENOENT') report.failures.push({ path: folder, message: String(error) });
    return undefined;
  });
  if (entries === undefined) return false;
  let remaining = entries.length;
  for (const entry of entries) {
    const target = path.join(folder, entry.name);
    await attempt(target, report, async () => {
      // lstat, never stat: a symbolic link is removed as itself, its target is not touched.
      const { mtimeMs } = await lstat(target);
      if (entry.isDirectory()) {
        const empty = await removeOlderThan(target, cutoff, report);
        if (!empty || mtimeMs >= cutoff) return;
        await rmdir(target);
        report.foldersRemoved += 1;
      } else {
        if (mtimeMs >= cutoff) return;
        await unlink(target);
        report.filesRemoved += 1;
      }
      remaining -= 1;
    });
  }
  return remaining === 0;
}

async function attempt(target: string, report: SweepReport, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') report.failures.push({ path: target, message: String(error) });
  }
}

function ignoreMissing(error: unknown): undefined {
  if (errorCode(error) === 'ENOENT') return undefined;
  throw error;
}

function closed(stream: WriteStream): Promise<void> {
  return new Promise((resolve) => (stream.closed ? resolve() : stream.once('close', () => resolve())));
}

function clipBytes(text: string, maxBytes: number): string {
  let clipped = '';
  let bytes = 0;
  for (const character of text) {
    bytes += Buffer.byteLength(character);
    if (bytes > maxBytes) break;
    clipped += character;
  }
  return clipped;
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
