import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// Telegram accounts linked to people of the household, and the one-time codes a person gets in the
// page to link one (`/start <code>` in the chat). The tables name the channel, so that a next chat
// channel links its accounts the same way. Only a SHA-256 digest of a code is stored. A person's
// links and codes go with them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('channel_links')
    .addColumn('channel', 'text', (column) => column.notNull())
    .addColumn('account', 'text', (column) => column.notNull())
    .addColumn('person_id', 'text', (column) => column.notNull().references('people.id').onDelete('cascade'))
    .addColumn('linked_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('channel_links_key', ['channel', 'account'])
    .execute();
  await db.schema.createIndex('channel_links_person').on('channel_links').columns(['person_id', 'channel']).execute();

  await db.schema
    .createTable('channel_link_codes')
    .addColumn('code_hash', 'text', (column) => column.primaryKey())
    .addColumn('channel', 'text', (column) => column.notNull())
    .addColumn('person_id', 'text', (column) => column.notNull().references('people.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('channel_link_codes_person').on('channel_link_codes').columns(['person_id', 'channel']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('channel_link_codes').execute();
  await db.schema.dropTable('channel_links').execute();
}
