import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { messageOf } from '../failure.ts';
import { migratorFor } from './migrations/index.ts';
import type { Database } from './schema.ts';
import { withStatementCache } from './statement-cache.ts';

export type Db = Kysely<Database>;

/** Why the database could not be brought up to date; start-up shows it as the one line it stops with. */
export class DatabaseStartError extends Error {
  override name = 'DatabaseStartError';
  constructor(
    message: string,
    /** The backup taken before migrating, when one was. */
    readonly backupFile?: string,
  ) {
    super(message);
  }
}

export interface OpenOptions {
  /**
   * Runs before migrations when some are pending on a database that already ran one (not on a
   * new file); a failure stops the start with nothing migrated.
   */
  beforeMigrating?: (pending: readonly string[]) => Promise<{ ok: true; file: string } | { ok: false; message: string }>;
}

/** Opens (creating if needed) the SQLite file in WAL mode and brings its schema up to date. */
export async function openDatabase(file: string, options: OpenOptions = {}): Promise<Db> {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const migrator = migratorFor(db);
  let backupFile: string | undefined;
  if (options.beforeMigrating) {
    const migrations = await migrator.getMigrations();
    const pending = migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
    if (pending.length > 0 && pending.length < migrations.length) {
      const backup = await options.beforeMigrating(pending);
      if (!backup.ok) {
        await db.destroy();
        throw new DatabaseStartError(`Did not migrate ${file}: the backup before migrating failed. ${backup.message}`);
      }
      backupFile = backup.file;
    }
  }
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new DatabaseStartError(`Database migration ${failed} failed on ${file}: ${messageOf(error)}.`, backupFile);
  }
  return db;
}
