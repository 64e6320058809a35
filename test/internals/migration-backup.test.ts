import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lastMigrationOf } from '../../src/operations/backup-manifest.ts';
import { backupBeforeMigrating, migrationBackups, restoreAdvice } from '../../src/operations/migration-backup.ts';
import { restoreBackup } from '../../src/operations/restore.ts';
import { DatabaseStartError, openDatabase } from '../../src/store/database.ts';
import { migrationNames, migratorFor } from '../../src/store/migrations/index.ts';

// A start that migrates a database holding data backs it up into DATA_DIR/backups/ first and
// keeps the last three; the backup is a whole `hearth backup` archive that restores the schema
// the database had.
const latest = migrationNames.at(-1)!;
const previous = migrationNames.at(-2)!;

let folder: string;
let dataDir: string;
let databaseFile: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-migration-backup-'));
  dataDir = path.join(folder, 'data');
  databaseFile = path.join(dataDir, 'hearth.db');
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const settings = () => ({ DATA_DIR: dataDir, DB_PATH: databaseFile });
const backupsFolder = () => path.join(dataDir, 'backups');

/** A database an older Hearth left: every migration but the last, and one session (made once, copied for each start). */
let olderTemplate: string;
beforeAll(async () => {
  const templateFolder = await mkdtemp(path.join(tmpdir(), 'hearth-older-database-'));
  olderTemplate = path.join(templateFolder, 'hearth.db');
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(olderTemplate) }) });
  try {
    expect((await migratorFor(db).migrateTo(previous)).error).toBeUndefined();
    const at = '2026-11-27T10:00:00.000Z';
    await db
      .insertInto('sessions')
      .values({ id: 's1', title: 'Disk space', title_set_by_user: 1, profile_id: 'server_admin', pinned: 0, context_tokens: 0, created_at: at, last_active: at, origin: null, model: null })
      .execute();
  } finally {
    await db.destroy();
  }
});
afterAll(async () => {
  await rm(path.dirname(olderTemplate), { recursive: true, force: true });
});

async function olderDatabase(): Promise<void> {
  for (const suffix of ['', '-wal', '-shm']) await rm(databaseFile + suffix, { force: true });
  await mkdir(dataDir, { recursive: true });
  await copyFile(olderTemplate, databaseFile);
}

/** What a start does with the database (createDependencies). */
async function start(): Promise<void> {
  const db = await openDatabase(databaseFile, { beforeMigrating: () => backupBeforeMigrating(settings()) });
  await db.destroy();
}

function lastMigration(file: string): string | null {
  const database = new SqliteDatabase(file, { readonly: true });
  try {
    return lastMigrationOf(database);
  } finally {
    database.close();
  }
}

describe('the backup before a migrating start', () => {
  it('backs up a database at an older migration, and restoring that backup brings the older schema and its data back', async () => {
    await olderDatabase();
    await start();
    expect(lastMigration(databaseFile)).toBe(latest);
    const [backup] = await migrationBackups(backupsFolder());
    expect(backup).toMatch(/^hearth-before-migrating-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.tar\.gz$/);

    const other = path.join(folder, 'other');
    const restored = await restoreBackup({ DATA_DIR: other, DB_PATH: path.join(other, 'hearth.db') }, path.join(backupsFolder(), backup!));
    expect(restored).toMatchObject({ ok: true, manifest: { last_migration: previous } });
    expect(lastMigration(path.join(other, 'hearth.db'))).toBe(previous);
    const database = new SqliteDatabase(path.join(other, 'hearth.db'), { readonly: true });
    expect(database.prepare('SELECT title FROM sessions').pluck().all()).toEqual(['Disk space']);
    database.close();
  });

  it('keeps the last three over four migrating starts', async () => {
    const taken: string[] = [];
    for (let round = 0; round < 4; round++) {
      await olderDatabase();
      await start();
      const now = await migrationBackups(backupsFolder());
      taken.push(now.at(-1)!);
      expect(now).toEqual(taken.slice(-3));
    }
    expect(new Set(taken).size).toBe(4);
  });

  it('takes none for a new database, nor for one already up to date', async () => {
    await start();
    await start();
    expect(existsSync(backupsFolder())).toBe(false);
    expect(lastMigration(databaseFile)).toBe(latest);
  });

  it('a failed migration names the backup, which holds the database as it was before the start', async () => {
    await olderDatabase();
    // In the way of the last migration, which creates this table.
    const database = new SqliteDatabase(databaseFile);
    database.exec('CREATE TABLE documents (id TEXT)');
    database.close();
    const failure = await start().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DatabaseStartError);
    const { message, backupFile } = failure as DatabaseStartError;
    expect(message).toMatch(new RegExp(`^Database migration ${latest} failed on ${databaseFile}: table "documents" already exists\\.$`));
    const [backup] = await migrationBackups(backupsFolder());
    expect(backupFile).toBe(path.join(backupsFolder(), backup!));
    expect(restoreAdvice(backupFile!)).toBe(
      `The database and DATA_DIR as they were before this start are in ${backupFile}. To go back: run the Hearth version you had before (docs/operations.md, "Roll back"), then \`npx hearth restore ${backupFile}\`.`,
    );
  });
});
