import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

export async function up(db: Kysely<any>): Promise<void> {
  // No foreign key to sessions: the audit outlives the session it was made in.
  await db.schema
    .createTable('approvals')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('session_id', 'text', (column) => column.notNull())
    .addColumn('call_id', 'text', (column) => column.notNull())
    .addColumn('tool', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('rule', 'text', (column) => column.notNull())
    .addColumn('is_subagent', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('decision', 'text')
    .addColumn('decided_by', 'text')
    .addColumn('remember', 'text', (column) => column.notNull().defaultTo('once'))
    .addColumn('requested_at', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('decided_at', 'text')
    .execute();
  await db.schema.createIndex('approvals_pending').on('approvals').columns(['decision', 'id']).execute();
  await db.schema.createIndex('approvals_remembered').on('approvals').columns(['session_id', 'remember', 'tool', 'subject']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('approvals').execute();
}
