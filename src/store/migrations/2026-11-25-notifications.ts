import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

export async function up(db: Kysely<any>): Promise<void> {
  // A deleted session leaves its notifications in the list, no longer pointing anywhere.
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('title', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('session_id', 'text', (column) => column.references('sessions.id').onDelete('set null'))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('read_at', 'text')
    .execute();
  await db.schema.createIndex('notifications_unread').on('notifications').columns(['read_at', 'id']).execute();
  // The one session each profile's heartbeat runs in, made on its first run.
  await db.schema
    .createTable('heartbeat_sessions')
    .addColumn('profile_id', 'text', (column) => column.primaryKey())
    .addColumn('session_id', 'text', (column) => column.notNull().references('sessions.id').onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('heartbeat_sessions').execute();
  await db.schema.dropTable('notifications').execute();
}
