import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

export async function up(db: Kysely<any>): Promise<void> {
  // A row per run under way: one left at start-up is a run a crash cut off.
  await db.schema
    .createTable('active_runs')
    .addColumn('session_id', 'text', (column) => column.primaryKey().references('sessions.id').onDelete('cascade'))
    .addColumn('started_at', 'text', (column) => column.notNull())
    .execute();
  // The answer streaming now, in pieces appended as it grows (never rewritten).
  await db.schema
    .createTable('answer_drafts')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('session_id', 'text', (column) => column.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('thinking', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('answer_drafts_session').on('answer_drafts').columns(['session_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('answer_drafts').execute();
  await db.schema.dropTable('active_runs').execute();
}
