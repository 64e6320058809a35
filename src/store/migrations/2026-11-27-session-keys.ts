import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// A session can carry where it came from (a channel such as `telegram`), and an outside key
// (`telegram:<chat id>`, `heartbeat:<profile id>`) can name the session it leads to, across
// restarts. The heartbeat's own table becomes one kind of key.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('origin', 'text').execute();
  await db.schema
    .createTable('session_keys')
    .addColumn('key', 'text', (column) => column.primaryKey())
    .addColumn('session_id', 'text', (column) => column.notNull().references('sessions.id').onDelete('cascade'))
    .execute();
  await sql`insert into session_keys (key, session_id) select 'heartbeat:' || profile_id, session_id from heartbeat_sessions`.execute(db);
  await db.schema.dropTable('heartbeat_sessions').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('heartbeat_sessions')
    .addColumn('profile_id', 'text', (column) => column.primaryKey())
    .addColumn('session_id', 'text', (column) => column.notNull().references('sessions.id').onDelete('cascade'))
    .execute();
  await sql`insert into heartbeat_sessions (profile_id, session_id) select substr(key, 11), session_id from session_keys where key like 'heartbeat:%'`.execute(db);
  await db.schema.dropTable('session_keys').execute();
  await db.schema.alterTable('sessions').dropColumn('origin').execute();
}
