import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// A household: people, each with a role. Hearth starts with its owner (named "Owner", no
// passphrase until they choose one), and everything an existing install holds — sessions,
// schedules, notifications, approvals — becomes the owner's, so nothing is lost or shown to
// anyone else. A session can be shared with the household on purpose.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('people')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('passphrase_hash', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute();
  await sql`create unique index people_name on people (name collate nocase)`.execute(db);
  const now = new Date().toISOString();
  const ownerId = randomUUID();
  await db.insertInto('people').values({ id: ownerId, name: 'Owner', role: 'owner', passphrase_hash: null, created_at: now, updated_at: now }).execute();

  for (const table of ['sessions', 'schedules', 'notifications']) {
    await db.schema.alterTable(table).addColumn('person_id', 'text').execute();
    await db.updateTable(table).set({ person_id: ownerId }).execute();
    await db.schema.createIndex(`${table}_person`).on(table).column('person_id').execute();
  }
  await db.schema.alterTable('sessions').addColumn('shared', 'integer', (column) => column.notNull().defaultTo(0)).execute();

  // Who asked (the person whose run waits), who decided and through which channel (page, rest, telegram).
  await db.schema.alterTable('approvals').addColumn('asked_by', 'text').execute();
  await db.schema.alterTable('approvals').addColumn('decider_id', 'text').execute();
  await db.schema.alterTable('approvals').addColumn('decided_via', 'text').execute();
  await db.updateTable('approvals').set({ asked_by: ownerId }).execute();
  await db.updateTable('approvals').set({ decider_id: ownerId }).where('decided_by', '=', 'user').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['decided_via', 'decider_id', 'asked_by']) await db.schema.alterTable('approvals').dropColumn(column).execute();
  await db.schema.alterTable('sessions').dropColumn('shared').execute();
  for (const table of ['notifications', 'schedules', 'sessions']) {
    await db.schema.dropIndex(`${table}_person`).execute();
    await db.schema.alterTable(table).dropColumn('person_id').execute();
  }
  await db.schema.dropTable('people').execute();
}
