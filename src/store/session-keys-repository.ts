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
