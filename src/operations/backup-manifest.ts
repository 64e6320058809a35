// manifest.json, the first entry of every backup: what made it and what it holds, each file
// with its size and SHA-256, so a restore can tell a whole archive from a damaged one.
import { Type, type Static } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import SqliteDatabase from 'better-sqlite3';

export const manifestName = 'manifest.json';
export const databaseName = 'hearth.db';
/** DATA_DIR's files sit under this folder of the archive. */
export const dataFolderName = 'data';
export const backupFormat = 'hearth-backup';

const Measured = Type.Object({ size: Type.Integer({ minimum: 0 }), sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }) });

const ManifestSchema = Type.Object({
  format: Type.Literal(backupFormat),
  format_version: Type.Literal(1),
  hearth_version: Type.String(),
  created_at: Type.String(),
  /** The last migration the database had run; null for a database no Hearth had started on. */
  last_migration: Type.Union([Type.String(), Type.Null()]),
  database: Measured,
  files: Type.Array(Type.Intersect([Type.Object({ path: Type.String({ minLength: 1 }) }), Measured])),
});

export type BackupManifest = Static<typeof ManifestSchema>;

let validator: ValidateFunction<BackupManifest> | undefined;
/** Compiled at the first restore, not at every server start that loads this module. */
const validate = (value: unknown): value is BackupManifest => (validator ??= new Ajv({ allErrors: false }).compile<BackupManifest>(ManifestSchema))(value);

/** The manifest in `text`, or why it is not one this Hearth reads. */
export function parseManifest(text: string): { ok: true; manifest: BackupManifest } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: `${manifestName} is not JSON` };
  }
  if (!validate(value)) {
    const [failure] = validator?.errors ?? [];
    return { ok: false, message: `${manifestName} is not a Hearth backup's (${failure?.instancePath || '/'} ${failure?.message ?? ''})` };
  }
  return { ok: true, manifest: value };
}

/** The last migration a database file ran (names sort in the order they run), null when it ran none. */
export function lastMigrationOf(database: SqliteDatabase.Database): string | null {
  const table = database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'").get();
  if (!table) return null;
  const row = database.prepare('SELECT name FROM kysely_migration ORDER BY name DESC LIMIT 1').get() as { name: string } | undefined;
  return row?.name ?? null;
}

/** Every migration a database file ran. */
export function migrationsOf(database: SqliteDatabase.Database): string[] {
  const table = database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'").get();
  if (!table) return [];
  return (database.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map((row) => row.name);
}
