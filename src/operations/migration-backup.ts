// The backup a start takes before it migrates a database that already holds data, into
// DATA_DIR/backups/, keeping the last three.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createBackup, timestampedName, type BackupSettings } from './backup.ts';

export const migrationBackupPrefix = 'hearth-before-migrating';
export const migrationBackupsKept = 3;

export type MigrationBackup = { ok: true; file: string } | { ok: false; message: string };

export async function backupBeforeMigrating(settings: BackupSettings): Promise<MigrationBackup> {
  const folder = path.join(path.resolve(settings.DATA_DIR), 'backups');
  const result = await createBackup(settings, path.join(folder, timestampedName(migrationBackupPrefix)));
  if (!result.ok) return result;
  await keepLatest(folder);
  return { ok: true, file: result.file };
}

/** The pre-migration backups in `folder`, oldest first (their names sort by time). */
export async function migrationBackups(folder: string): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  return names.filter((name) => name.startsWith(`${migrationBackupPrefix}-`) && name.endsWith('.tar.gz')).sort();
}

async function keepLatest(folder: string): Promise<void> {
  const names = await migrationBackups(folder);
  for (const name of names.slice(0, -migrationBackupsKept)) await rm(path.join(folder, name), { force: true });
}

/** What a person does with the backup a failed migration leaves. */
export function restoreAdvice(file: string): string {
  return `The database and DATA_DIR as they were before this start are in ${file}. To go back: run the Hearth version you had before (docs/operations.md, "Roll back"), then \`npx hearth restore ${file}\`.`;
}
