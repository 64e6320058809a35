import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// A schedule's session is found by its key `schedule:<schedule id>` in session_keys, as the
// heartbeats' and channels' are, instead of by schedules.session_id: the column is copied into
// the keys (where its session still exists; a deleted one was made again on the next run anyway)
// and dropped.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    insert into session_keys (key, session_id)
    select 'schedule:' || schedules.id, schedules.session_id from schedules
    where schedules.session_id in (select id from sessions)
    on conflict (key) do nothing
  `.execute(db);
  await db.schema.alterTable('schedules').dropColumn('session_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('schedules').addColumn('session_id', 'text').execute();
  await sql`
    update schedules set session_id = (select session_id from session_keys where key = 'schedule:' || schedules.id)
  `.execute(db);
  await sql`delete from session_keys where key like 'schedule:%'`.execute(db);
}
