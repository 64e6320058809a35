import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('title', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('title_set_by_user', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('profile_id', 'text', (column) => column.notNull())
    .addColumn('pinned', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('context_tokens', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('last_active', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sessions_listing').on('sessions').columns(['pinned desc', 'last_active desc']).execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('session_id', 'text', (column) => column.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('buffer', 'text', (column) => column.notNull().check(sql`buffer in ('display', 'context')`))
    .addColumn('position', 'integer', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('content', 'text', (column) => column.notNull())
    .addColumn('details', 'text', (column) => column.notNull().defaultTo('{}'))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('messages_by_position')
    .unique()
    .on('messages')
    .columns(['session_id', 'buffer', 'position'])
    .execute();

  await db.schema
    .createTable('scratchpad_sections')
    .addColumn('session_id', 'text', (column) => column.notNull())
    .addColumn('section', 'text', (column) => column.notNull())
    .addColumn('content', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('scratchpad_sections_key', ['session_id', 'section'])
    .execute();

  await db.schema
    .createTable('todo_lists')
    .addColumn('session_id', 'text', (column) => column.primaryKey())
    .addColumn('items', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['todo_lists', 'scratchpad_sections', 'messages', 'sessions']) {
    await db.schema.dropTable(table).execute();
  }
}
