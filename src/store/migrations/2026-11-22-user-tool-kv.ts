import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('user_tool_kv')
    .addColumn('tool', 'text', (column) => column.notNull())
    .addColumn('key', 'text', (column) => column.notNull())
    .addColumn('value', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('user_tool_kv_key', ['tool', 'key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_tool_kv').execute();
}
