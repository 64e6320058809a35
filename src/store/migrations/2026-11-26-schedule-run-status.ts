import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// docs/protocol.md names a failed run's status `error`; runs stored before were written `failed`.
export async function up(db: Kysely<any>): Promise<void> {
  await db.updateTable('schedule_runs').set({ status: 'error' }).where('status', '=', 'failed').execute();
  await db.updateTable('schedules').set({ last_status: 'error' }).where('last_status', '=', 'failed').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.updateTable('schedule_runs').set({ status: 'failed' }).where('status', '=', 'error').execute();
  await db.updateTable('schedules').set({ last_status: 'failed' }).where('last_status', '=', 'error').execute();
}
