import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// A session can pin the model its turns use (the page's model picker); null follows the profile's.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('model', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('model').execute();
}
