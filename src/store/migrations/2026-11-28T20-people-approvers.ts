import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// Which roles the asking run's profile let decide (its `approvers`, as JSON), kept with each
// approval so the audit can say who could have decided it even after the profile changed.
// Rows from before hold null: they are the first owner's, whom only the owner decides.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('approvers', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').dropColumn('approvers').execute();
}
