import type { Db } from './database.ts';

/** Marks the session as running; the row outlives a crash, which is how a cut-off run is found. */
export async function beginRun(db: Db, sessionId: string): Promise<void> {
  await db
    .insertInto('active_runs')
    .values({ session_id: sessionId, started_at: new Date().toISOString() })
    .onConflict((conflict) => conflict.column('session_id').doUpdateSet({ started_at: new Date().toISOString() }))
    .execute();
}

export async function endRun(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('answer_drafts').where('session_id', '=', sessionId).execute();
  await db.deleteFrom('active_runs').where('session_id', '=', sessionId).execute();
}

export async function listActiveRuns(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('active_runs').select('session_id').orderBy('started_at').execute();
  return rows.map((row) => row.session_id);
}

/** Appends the next piece of the answer streaming now: one small insert, whatever the answer's length. */
export async function appendDraft(db: Db, sessionId: string, piece: { text: string; thinking: string }): Promise<void> {
  await db.insertInto('answer_drafts').values({ session_id: sessionId, text: piece.text, thinking: piece.thinking }).execute();
}

/** The draft pieces are part of the round's answer, now stored whole: drop them. */
export async function clearDraft(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('answer_drafts').where('session_id', '=', sessionId).execute();
}

export async function readDraft(db: Db, sessionId: string): Promise<{ text: string; thinking: string }> {
  const pieces = await db.selectFrom('answer_drafts').select(['text', 'thinking']).where('session_id', '=', sessionId).orderBy('id').execute();
  return { text: pieces.map((piece) => piece.text).join(''), thinking: pieces.map((piece) => piece.thinking).join('') };
}
