// Which of DATA_DIR's files are the person's state, and so go into a backup.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { lockFileName } from './instance-lock.ts';

/** Caches, scratch and backups themselves, at the top of DATA_DIR: rebuilt or not worth keeping. */
export const notStateFolders = ['backups', 'npm-cache', 'jail'];

/**
 * Folders a restore unpacks into and a backup written into DATA_DIR fills, the built copies of
 * user tools (rebuilt from their sources), and start-up's write probes.
 */
const notStatePatterns = [/^\.restore-/, /^\.hearth-backup-/, /\.tar\.gz\.partial$/, /^user-tools\/\.build$/, /(^|\/)\.write-check-\d+$/];

export interface StateFiles {
  /** Regular files, as paths relative to DATA_DIR with `/` between folders. */
  files: string[];
  /** Symbolic links, sockets and the like, which a backup leaves out. */
  skipped: string[];
}

/**
 * DATA_DIR's state files, less the database (copied through SQLite, never as a file) and what
 * `notStateFolders` and the lock name.
 */
export async function listStateFiles(dataDir: string, databaseFile: string): Promise<StateFiles> {
  const root = path.resolve(dataDir);
  const database = path.relative(root, path.resolve(databaseFile)).split(path.sep).join('/');
  const databaseFiles = new Set(['', '-wal', '-shm', '-journal'].map((suffix) => database + suffix));
  const result: StateFiles = { files: [], skipped: [] };
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    for (const entry of entries.sort((left, right) => left.name.localeCompare(right.name))) {
      const name = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (relative === '' && (notStateFolders.includes(name) || name === lockFileName || name === `${lockFileName}-journal`)) continue;
      if (databaseFiles.has(name) || notStatePatterns.some((pattern) => pattern.test(name))) continue;
      if (entry.isDirectory()) await walk(name);
      else if (entry.isFile()) result.files.push(name);
      else result.skipped.push(name);
    }
  };
  await walk('');
  return result;
}

export interface CopiedFile {
  size: number;
  sha256: string;
}

/** Copies one file, measuring what was written (the file may change while it is read). */
export async function copyMeasured(from: string, to: string): Promise<CopiedFile> {
  await mkdir(path.dirname(to), { recursive: true });
  const hash = createHash('sha256');
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(createReadStream(from), measure, createWriteStream(to));
  return { size, sha256: hash.digest('hex') };
}

/** The size and SHA-256 of a file as it is. */
export async function measure(file: string): Promise<CopiedFile> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest('hex') };
}
