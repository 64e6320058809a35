import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// Passkeys (WebAuthn): a second way to sign in. Each row is one authenticator's credential for a
// person: its public key (COSE, base64url) and the signature counter it last reported. They go
// with their person.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('person_id', 'text', (column) => column.notNull().references('people.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('public_key', 'text', (column) => column.notNull())
    .addColumn('counter', 'integer', (column) => column.notNull())
    .addColumn('transports', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('passkeys_person').on('passkeys').column('person_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('passkeys').execute();
}
