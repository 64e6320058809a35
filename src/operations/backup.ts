// `hearth backup`: one .tar.gz of the database, copied through SQLite's online backup (a
// consistent snapshot while Hearth runs and writes), and DATA_DIR's state files, with a
// manifest that lets `hearth restore` check every byte before it changes anything.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type { Config } from '../config.ts';
import { messageOf } from '../failure.ts';
import { version } from '../version.ts';
import { copyMeasured, listStateFiles, measure } from './data-dir-files.ts';
import { matchOwner } from './instance-lock.ts';
import { dataFolderName, databaseName, lastMigrationOf, manifestName, backupFormat, type BackupManifest } from './backup-manifest.ts';

export type BackupSettings = Pick<Config, 'DATA_DIR' | 'DB_PATH'> & Partial<Pick<Config, StateKey>>;

/** Settings that may point at state outside DATA_DIR, which a backup of DATA_DIR then misses. */
const stateKeys = ['TOOLS_DIR', 'SESSION_FILES_DIR', 'DOCUMENTS_DIR', 'MCP_CONFIG_FILE', 'SSH_HOSTS_FILE', 'PERSONA_FILE'] as const;
type StateKey = (typeof stateKeys)[number];

export type BackupResult =
  | {
      ok: true;
      file: string;
      manifest: BackupManifest;
      /** Links and other non-files left out. */
      skipped: string[];
      /** `KEY=path` settings whose state lives outside DATA_DIR and is not in the archive. */
      outside: string[];
    }
  | { ok: false; message: string };

/** A name that sorts by time: `<prefix>-2026-11-28T23-40-12-345Z.tar.gz`. */
export function timestampedName(prefix: string, at = new Date()): string {
  return `${prefix}-${at.toISOString().replaceAll(':', '-').replace('.', '-')}.tar.gz`;
}

/** Writes the archive to `file` (through `file.partial`, so a failed backup leaves no archive that looks whole). */
export async function createBackup(settings: BackupSettings, file: string): Promise<BackupResult> {
  const target = path.resolve(file);
  const databaseFile = path.resolve(settings.DB_PATH);
  if (!existsSync(databaseFile)) return { ok: false, message: `There is no database at ${databaseFile}: nothing to back up (is DATA_DIR right?).` };
  await mkdir(path.dirname(target), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(target), '.hearth-backup-'));
  try {
    const snapshot = path.join(staging, databaseName);
    await snapshotDatabase(databaseFile, snapshot);
    const lastMigration = withDatabase(snapshot, (database) => lastMigrationOf(database));
    const state = await listStateFiles(settings.DATA_DIR, databaseFile);
    const files: BackupManifest['files'] = [];
    await mkdir(path.join(staging, dataFolderName));
    for (const relative of state.files) {
      const copied = await copyMeasured(path.join(settings.DATA_DIR, relative), path.join(staging, dataFolderName, ...relative.split('/'))).catch(
        (error: NodeJS.ErrnoException) => {
          // Removed between the listing and the copy (a session's upload expiring): it is simply not in this backup.
          if (error.code === 'ENOENT') return undefined;
          throw error;
        },
      );
      if (copied) files.push({ path: relative, ...copied });
    }
    const manifest: BackupManifest = {
      format: backupFormat,
      format_version: 1,
      hearth_version: version,
      created_at: new Date().toISOString(),
      last_migration: lastMigration,
      database: await measure(snapshot),
      files,
    };
    await writeFile(path.join(staging, manifestName), `${JSON.stringify(manifest, null, 2)}\n`);
    const partial = `${target}.partial`;
    // Loaded here: the server reaches this module at every start, and writes an archive only before migrating.
    const { create: createTar } = await import('tar');
    await createTar({ gzip: true, file: partial, cwd: staging, portable: true }, [manifestName, databaseName, dataFolderName]);
    await rename(partial, target);
    giveToDataDirOwner(settings.DATA_DIR, target);
    return { ok: true, file: target, manifest, skipped: state.skipped, outside: outsideState(settings) };
  } catch (error) {
    await rm(`${target}.partial`, { force: true });
    return { ok: false, message: `The backup failed: ${messageOf(error)}.` };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * SQLite's online backup API, from a read-only connection of this process. All pages in one
 * step: one read transaction, which in WAL mode never blocks the running server's writes, and a
 * write of theirs cannot restart a copy that is already complete.
 */
async function snapshotDatabase(source: string, destination: string): Promise<void> {
  const database = new SqliteDatabase(source, { readonly: true, fileMustExist: true });
  try {
    database.pragma('busy_timeout = 5000');
    await database.backup(destination, { progress: () => 0x7fffffff });
  } finally {
    database.close();
  }
}

export function withDatabase<T>(file: string, use: (database: SqliteDatabase.Database) => T): T {
  const database = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    return use(database);
  } finally {
    database.close();
  }
}

/** Root writing into DATA_DIR (`sudo npx hearth backup`) leaves the archive and its folder to DATA_DIR's owner, the service. */
function giveToDataDirOwner(dataDir: string, file: string): void {
  const root = path.resolve(dataDir);
  for (let folder = path.dirname(file); folder.startsWith(root + path.sep); folder = path.dirname(folder)) matchOwner(folder, root);
  if (file.startsWith(root + path.sep)) matchOwner(file, root);
}

function outsideState(settings: BackupSettings): string[] {
  const root = path.resolve(settings.DATA_DIR) + path.sep;
  return stateKeys.flatMap((key) => {
    const value = settings[key];
    if (!value) return [];
    return path.resolve(value).startsWith(root) ? [] : [`${key}=${path.resolve(value)}`];
  });
}
