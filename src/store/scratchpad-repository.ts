import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface ScratchpadSection {
  section: string;
  content: string;
  updatedAt: string;
}

export async function writeSection(db: Db, sessionId: string, section: string, content: string): Promise<void> {
  const updatedAt = new Date().toISOString();
  await db
    .insertInto('scratchpad_sections')
    .values({ session_id: sessionId, section, content, updated_at: updatedAt })
    .onConflict((conflict) => conflict.columns(['session_id', 'section']).doUpdateSet({ content, updated_at: updatedAt }))
    .execute();
}

/** Adds `content` on a new line after the section's text, creating the section when it is missing. */
export async function appendSection(db: Db, sessionId: string, section: string, content: string): Promise<void> {
  const updatedAt = new Date().toISOString();
  // One upsert, so two appends racing on the same section cannot lose either text.
  await db
    .insertInto('scratchpad_sections')
    .values({ session_id: sessionId, section, content, updated_at: updatedAt })
    .onConflict((conflict) =>
      conflict.columns(['session_id', 'section']).doUpdateSet({
        content: sql<string>`scratchpad_sections.content || char(10) || excluded.content`,
        updated_at: updatedAt,
      }),
    )
    .execute();
}

export async function readSection(db: Db, sessionId: string, section: string): Promise<ScratchpadSection | undefined> {
  const row = await db
    .selectFrom('scratchpad_sections')
    .select(['section', 'content', 'updated_at'])
    .where('session_id', '=', sessionId)
    .where('section', '=', section)
    .executeTakeFirst();
  return row && { section: row.section, content: row.content, updatedAt: row.updated_at };
}

/** Every section of the session, ordered by name. */
export async function readAllSections(db: Db, sessionId: string): Promise<ScratchpadSection[]> {
  const rows = await db
    .selectFrom('scratchpad_sections')
    .select(['section', 'content', 'updated_at'])
    .where('session_id', '=', sessionId)
    .orderBy('section')
    .execute();
  return rows.map((row) => ({ section: row.section, content: row.content, updatedAt: row.updated_at }));
}

/** Removes one section, or all of them when `section` is absent; returns how many were removed. */
export async function clearSections(db: Db, sessionId: string, section?: string): Promise<number> {
  let query = db.deleteFrom('scratchpad_sections').where('session_id', '=', sessionId);
  if (section !== undefined) query = query.where('section', '=', section);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
