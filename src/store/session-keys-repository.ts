import type { Db } from './database.ts';

/** The session an outside key leads to; undefined before it was bound or once that session is deleted. */
export async function findKeyedSession(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('session_keys').select('session_id').where('key', '=', key).executeTakeFirst();
  return row?.session_id;
}

/** Points the key at a session, replacing what it led to before. */
export async function bindSessionKey(db: Db, key: string, sessionId: string): Promise<void> {
  await db
    .insertInto('session_keys')
    .values({ key, session_id: sessionId })
    .onConflict((conflict) => conflict.column('key').doUpdateSet({ session_id: sessionId }))
    .execute();
}

/** Unbinds the key: the next find-or-create by it makes a new session. */
export async function unbindSessionKey(db: Db, key: string): Promise<void> {
  await db.deleteFrom('session_keys').where('key', '=', key).execute();
}

/** Every key starting with `prefix` and the session it leads to (the scheduler's `schedule:` keys at start). */
export async function listKeyedSessions(db: Db, prefix: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('session_keys')
    .select(['key', 'session_id'])
    .where('key', '>=', prefix)
    .where('key', '<', `${prefix}\u{10FFFF}`)
    .execute();
  return new Map(rows.map((row) => [row.key, row.session_id]));
}
