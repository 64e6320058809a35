// `hearth restore`: refuses while a Hearth runs on the DATA_DIR, unpacks the archive into a
// folder inside DATA_DIR, checks all of it (manifest, every checksum, the database's integrity and
// schema) and only then swaps it in, moving what was there aside into backups/replaced-<time>/.
import { chownSync, existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { extract } from 'tar';
import type { Config } from '../config.ts';
import { messageOf } from '../failure.ts';
import { migrationNames } from '../store/migrations/index.ts';
import { dataFolderName, databaseName, manifestName, migrationsOf, parseManifest, type BackupManifest } from './backup-manifest.ts';
import { withDatabase } from './backup.ts';
import { measure, notStateFolders } from './data-dir-files.ts';
import { acquireInstanceLock, lockFileName } from './instance-lock.ts';

export type RestoreSettings = Pick<Config, 'DATA_DIR' | 'DB_PATH'>;

export type RestoreResult =
  | {
      ok: true;
      manifest: BackupManifest;
      /** Where what DATA_DIR held before was moved; undefined when it held nothing. */
      replaced: string | undefined;
    }
  | { ok: false; message: string };

type Check = { ok: true; manifest: BackupManifest } | { ok: false; message: string };

export async function restoreBackup(settings: RestoreSettings, archive: string): Promise<RestoreResult> {
  const archiveFile = path.resolve(archive);
  if (!existsSync(archiveFile)) return { ok: false, message: `There is no file ${archiveFile}.` };
  const dataDir = path.resolve(settings.DATA_DIR);
  await mkdir(dataDir, { recursive: true });
  const locked = acquireInstanceLock(dataDir);
  if (!locked.ok) return { ok: false, message: `${locked.message} Stop it first (\`systemctl stop hearth\`), then restore. Nothing was changed.` };
  const staging = await mkdtemp(path.join(dataDir, '.restore-'));
  try {
    const checked = await unpackAndCheck(archiveFile, staging);
    if (!checked.ok) return { ok: false, message: `Refusing to restore ${archiveFile}: ${checked.message}. Nothing was changed.` };
    try {
      const replaced = await swapIn(staging, dataDir, path.resolve(settings.DB_PATH));
      return { ok: true, manifest: checked.manifest, replaced };
    } catch (error) {
      return { ok: false, message: `The restore failed while moving files into ${dataDir} (${messageOf(error)}); what was there is back in place.` };
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
    locked.lock.release();
  }
}

const allowedEntry = (entryPath: string) => {
  const name = entryPath.replace(/^\.\//, '').replace(/\/$/, '');
  return name === manifestName || name === databaseName || name === dataFolderName || name.startsWith(`${dataFolderName}/`);
};

/** The archive unpacked into `staging` and checked whole, or what is wrong with it. */
export async function unpackAndCheck(archiveFile: string, staging: string): Promise<Check> {
  const strangers: string[] = [];
  try {
    // Synchronous: a damaged archive stops it with nothing left writing into `staging` behind the error.
    extract({
      file: archiveFile,
      cwd: staging,
      strict: true,
      sync: true,
      filter: (entryPath, entry) => {
        const kind = 'type' in entry ? entry.type : entry.isDirectory() ? 'Directory' : 'File';
        const wanted = allowedEntry(entryPath) && (kind === 'File' || kind === 'OldFile' || kind === 'Directory');
        if (!wanted) strangers.push(entryPath);
        return wanted;
      },
    });
  } catch (error) {
    return { ok: false, message: `the archive is damaged or is not a .tar.gz (${messageOf(error)})` };
  }
  if (strangers.length > 0) return { ok: false, message: `it holds what no Hearth backup holds: ${strangers.slice(0, 5).join(', ')}` };
  const manifestFile = path.join(staging, manifestName);
  if (!existsSync(manifestFile)) return { ok: false, message: `it has no ${manifestName}, so it is not a Hearth backup` };
  const parsed = parseManifest(await readFile(manifestFile, 'utf8'));
  if (!parsed.ok) return parsed;
  const { manifest } = parsed;

  const unpacked = listFiles(path.join(staging, dataFolderName));
  const listed = new Set(manifest.files.map((file) => file.path));
  const missing = [...listed].filter((file) => !unpacked.has(file));
  if (missing.length > 0) return { ok: false, message: `files the manifest lists are missing (the archive is cut short?): ${missing.slice(0, 5).join(', ')}` };
  const extra = [...unpacked].filter((file) => !listed.has(file));
  if (extra.length > 0) return { ok: false, message: `files the manifest does not list are in it: ${extra.slice(0, 5).join(', ')}` };
  for (const file of manifest.files) {
    const found = await measure(path.join(staging, dataFolderName, ...file.path.split('/')));
    if (found.size !== file.size || found.sha256 !== file.sha256) return { ok: false, message: `${file.path} does not match its checksum in the manifest` };
  }

  const databaseFile = path.join(staging, databaseName);
  if (!existsSync(databaseFile)) return { ok: false, message: `it has no ${databaseName}` };
  const found = await measure(databaseFile);
  if (found.size !== manifest.database.size || found.sha256 !== manifest.database.sha256) return { ok: false, message: `${databaseName} does not match its checksum in the manifest` };
  return checkDatabase(databaseFile, manifest);
}

function checkDatabase(databaseFile: string, manifest: BackupManifest): Check {
  try {
    return withDatabase(databaseFile, (database) => {
      const integrity = database.pragma('integrity_check', { simple: true });
      if (integrity !== 'ok') return { ok: false, message: `the database fails SQLite's integrity check (${String(integrity).replace(/\s+/g, ' ')})` };
      const ran = migrationsOf(database);
      const unknown = ran.filter((name) => !migrationNames.includes(name));
      if (unknown.length > 0) {
        return {
          ok: false,
          message: `its database comes from a newer Hearth (${manifest.hearth_version}: migration ${unknown.at(-1)}, which this Hearth does not know); upgrade Hearth first`,
        };
      }
      if ((ran.at(-1) ?? null) !== manifest.last_migration) return { ok: false, message: `its database is not at the migration the manifest names (${manifest.last_migration})` };
      return { ok: true, manifest };
    });
  } catch (error) {
    return { ok: false, message: `its database does not open (${messageOf(error).replace(/\s+/g, ' ')})` };
  }
}

/** Regular files under `root`, as `/`-joined relative paths. */
function listFiles(root: string): Set<string> {
  const found = new Set<string>();
  if (!existsSync(root)) return found;
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    found.add(path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  }
  return found;
}

/** Moves, undone in reverse should one fail, so a failed swap leaves DATA_DIR as it was. */
class Moves {
  private readonly done: [from: string, to: string][] = [];

  async move(from: string, to: string): Promise<void> {
    await mkdir(path.dirname(to), { recursive: true });
    await moveAcross(from, to);
    this.done.push([from, to]);
  }

  async undo(): Promise<void> {
    for (const [from, to] of this.done.reverse()) await moveAcross(to, from);
  }
}

/** A rename; a copy and removal where DB_PATH is on another file system than DATA_DIR. */
async function moveAcross(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, to);
    await rm(from);
  }
}

async function swapIn(staging: string, dataDir: string, databaseFile: string): Promise<string | undefined> {
  const replaced = path.join(dataDir, 'backups', `replaced-${new Date().toISOString().replaceAll(':', '-').replace('.', '-')}`);
  const kept = new Set([...notStateFolders, lockFileName, `${lockFileName}-journal`, path.basename(staging)]);
  const current = (await readdir(dataDir)).filter((name) => !kept.has(name) && !name.startsWith('.restore-'));
  const databaseFiles = ['', '-wal', '-shm'].map((suffix) => databaseFile + suffix).filter((file) => existsSync(file));
  const databaseOutside = !databaseFile.startsWith(dataDir + path.sep);
  const moves = new Moves();
  try {
    for (const name of current) await moves.move(path.join(dataDir, name), path.join(replaced, name));
    if (databaseOutside) for (const file of databaseFiles) await moves.move(file, path.join(replaced, 'database', path.basename(file)));
    else for (const file of databaseFiles) if (existsSync(file)) await moves.move(file, path.join(replaced, path.relative(dataDir, file)));
    const restored = existsSync(path.join(staging, dataFolderName)) ? await readdir(path.join(staging, dataFolderName)) : [];
    for (const name of restored) await moves.move(path.join(staging, dataFolderName, name), path.join(dataDir, name));
    await moves.move(path.join(staging, databaseName), databaseFile);
    for (const name of restored) giveToOwnerOf(dataDir, path.join(dataDir, name));
    giveToOwnerOf(path.dirname(databaseFile), databaseFile);
    // Where the service writes its backups before migrating, made here when this restore replaced something.
    if (existsSync(path.join(dataDir, 'backups'))) giveToOwnerOf(dataDir, path.join(dataDir, 'backups'));
  } catch (error) {
    await moves.undo();
    throw error;
  }
  return current.length > 0 || databaseFiles.length > 0 ? replaced : undefined;
}

/** Root restoring into the service's folder (`sudo npx hearth restore`) gives the files to that folder's owner. */
function giveToOwnerOf(folder: string, target: string): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = statSync(folder);
  const walk = (file: string) => {
    chownSync(file, uid, gid);
    if (lstatSync(file).isDirectory()) for (const name of readdirSync(file)) walk(path.join(file, name));
  };
  walk(target);
}
