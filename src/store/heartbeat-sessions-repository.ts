import type { Db } from './database.ts';

/** The session a profile's heartbeat runs in; undefined before its first run or once that session is deleted. */
export async function findHeartbeatSession(db: Db, profileId: string): Promise<string | undefined> {
  const row = await db.selectFrom('heartbeat_sessions').select('session_id').where('profile_id', '=', profileId).executeTakeFirst();
  return row?.session_id;
}

export async function setHeartbeatSession(db: Db, profileId: string, sessionId: string): Promise<void> {
  await db
    .insertInto('heartbeat_sessions')
    .values({ profile_id: profileId, session_id: sessionId })
    .onConflict((conflict) => conflict.column('profile_id').doUpdateSet({ session_id: sessionId }))
    .execute();
}
