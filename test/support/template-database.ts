import { copyFile, mkdtemp } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/database.ts';

// Every migration run on a new file costs a test's app start ~0.1 s (18 migrations, each its own
// transaction); the tests start about a thousand. A worker migrates one file and each new data folder
// starts from a copy of it: the same schema, made by the same migrations. The migration tests
// (test/internals/migration-backup.test.ts, people-migration.test.ts) migrate files of their own.
let template: Promise<string> | undefined;

async function migratedTemplate(): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-template-db-'));
  const file = path.join(folder, 'hearth.db');
  const db = await openDatabase(file);
  // Closing the only connection checkpoints the WAL into the file and removes it: the file is whole.
  await db.destroy();
  return file;
}

/** Puts a migrated, empty database at `file` unless one is there already (a restart test's second start). */
export async function seedDatabase(file: string): Promise<void> {
  if (existsSync(file)) return;
  template ??= migratedTemplate();
  await copyFile(await template, file);
}
