import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

export async function up(db: Kysely<any>): Promise<void> {
  // Exactly one of cron, every_ms and at is set; the scheduler checks it before a row is written.
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('prompt', 'text', (column) => column.notNull())
    .addColumn('cron', 'text')
    .addColumn('every_ms', 'integer')
    .addColumn('at', 'text')
    .addColumn('timezone', 'text', (column) => column.notNull())
    .addColumn('profile_id', 'text', (column) => column.notNull())
    // No foreign key: a deleted session is made again on the next run.
    .addColumn('session_id', 'text')
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('next_run_at', 'text')
    .addColumn('last_run_at', 'text')
    .addColumn('last_status', 'text')
    .execute();
  await db.schema
    .createTable('schedule_runs')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('schedule_id', 'text', (column) => column.notNull().references('schedules.id').onDelete('cascade'))
    .addColumn('started_at', 'text', (column) => column.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('session_id', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('schedule_runs_schedule').on('schedule_runs').columns(['schedule_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('schedule_runs').execute();
  await db.schema.dropTable('schedules').execute();
}
