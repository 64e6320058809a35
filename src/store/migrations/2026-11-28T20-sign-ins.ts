import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// How people prove who they are: sign-ins (the page's cookie), personal API tokens (scripts), and
// the one-time invitations the owner hands out. Only a SHA-256 digest of each secret is stored, so
// the database alone signs nobody in. A person's sign-ins and tokens go with them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sign_ins')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('secret_hash', 'text', (column) => column.notNull().unique())
    .addColumn('person_id', 'text', (column) => column.notNull().references('people.id').onDelete('cascade'))
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('last_used_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sign_ins_person').on('sign_ins').column('person_id').execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('secret_hash', 'text', (column) => column.notNull().unique())
    .addColumn('person_id', 'text', (column) => column.notNull().references('people.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('api_tokens_person').on('api_tokens').column('person_id').execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('code_hash', 'text', (column) => column.notNull().unique())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('invited_by', 'text', (column) => column.references('people.id').onDelete('set null'))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('accepted_by', 'text', (column) => column.references('people.id').onDelete('set null'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('invitations').execute();
  await db.schema.dropTable('api_tokens').execute();
  await db.schema.dropTable('sign_ins').execute();
}
