import { randomUUID } from 'node:crypto';
import type { Db } from './database.ts';
import type { ExpressionBuilder } from 'kysely';
import type { Role } from '../people/person.ts';
import { firstOwnerId } from './first-owner.ts';
import type { Database, SessionsTable } from './schema.ts';

export interface Session {
  id: string;
  title: string;
  titleSetByUser: boolean;
  profileId: string;
  pinned: boolean;
  contextTokens: number;
  createdAt: string;
  lastActive: string;
  /** The channel the session came from (`telegram`); null for the page's, schedules' and heartbeats'. */
  origin: string | null;
  /** The model pinned for the session's turns (the page's model picker); null follows the profile's. */
  model: string | null;
  /** Whose session it is. */
  personId: string;
  /** Shared with the household on purpose. */
  shared: boolean;
}

export interface SessionChanges {
  title?: string;
  titleSetByUser?: boolean;
  profileId?: string;
  pinned?: boolean;
  contextTokens?: number;
  /** null returns the session to its profile's model. */
  model?: string | null;
  shared?: boolean;
}

const columns = ['id', 'title', 'title_set_by_user', 'profile_id', 'pinned', 'context_tokens', 'created_at', 'last_active', 'origin', 'model', 'person_id', 'shared'] as const;

function fromRow(row: SessionsTable): Session {
  return {
    id: row.id,
    title: row.title,
    titleSetByUser: row.title_set_by_user === 1,
    profileId: row.profile_id,
    pinned: row.pinned === 1,
    contextTokens: row.context_tokens,
    createdAt: row.created_at,
    lastActive: row.last_active,
    origin: row.origin,
    model: row.model,
    personId: row.person_id,
    shared: row.shared === 1,
  };
}

export interface NewSessionRow {
  profileId: string;
  origin?: string | null;
  /** Whose it is; the first owner's when not named. */
  personId?: string;
}

export async function createSession(db: Db, { profileId, origin = null, personId }: NewSessionRow): Promise<Session> {
  const now = new Date().toISOString();
  const row = {
    id: randomUUID(),
    title: '',
    title_set_by_user: 0,
    profile_id: profileId,
    pinned: 0,
    context_tokens: 0,
    created_at: now,
    last_active: now,
    origin,
    model: null,
    shared: 0,
  };
  const { person_id } = await db
    .insertInto('sessions')
    .values({ ...row, person_id: personId ?? firstOwnerId() })
    .returning('person_id')
    .executeTakeFirstOrThrow();
  return fromRow({ ...row, person_id });
}

export async function findSession(db: Db, id: string): Promise<Session | undefined> {
  const row = await db.selectFrom('sessions').select(columns).where('id', '=', id).executeTakeFirst();
  return row && fromRow(row);
}

/**
 * Pinned first, then the most recently active; a session with no message yet is not listed. With
 * `personId`: only that person's and those shared with the household.
 */
export async function listSessions(db: Db, personId?: string): Promise<Session[]> {
  let query = db.selectFrom('sessions').select(columns).where(hasMessages);
  if (personId !== undefined) query = query.where((expression) => expression.or([expression('person_id', '=', personId), expression('shared', '=', 1)]));
  const rows = await query
    .orderBy('pinned', 'desc')
    .orderBy('last_active', 'desc')
    .execute();
  return rows.map(fromRow);
}

/** The most recently active sessions that have a message, of one origin (`telegram`) when given. */
export async function listRecentSessions(db: Db, options: { origin?: string; limit: number }): Promise<Session[]> {
  let query = db.selectFrom('sessions').select(columns).where(hasMessages);
  if (options.origin !== undefined) query = query.where('origin', '=', options.origin);
  const rows = await query.orderBy('last_active', 'desc').limit(options.limit).execute();
  return rows.map(fromRow);
}

const hasMessages = (expression: ExpressionBuilder<Database, 'sessions'>) =>
  expression.exists(
    expression.selectFrom('messages').select('messages.id').whereRef('messages.session_id', '=', 'sessions.id').where('messages.buffer', '=', 'display'),
  );

/** Ids of the sessions created before `before` that never got a message (New session, then nothing). */
export async function listEmptySessionIds(db: Db, before: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('created_at', '<', before)
    .where((expression) => expression.not(hasMessages(expression)))
    .execute();
  return rows.map((row) => row.id);
}

/** Ids of the sessions of people with `role` whose last activity was before `before` (guests' sessions expire). */
export async function listIdleSessionIdsOfRole(db: Db, role: Role, before: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sessions')
    .innerJoin('people', 'people.id', 'sessions.person_id')
    .select('sessions.id')
    .where('people.role', '=', role)
    .where('sessions.last_active', '<', before)
    .execute();
  return rows.map((row) => row.id);
}

/** Every session's id, in no particular order. */
export async function listSessionIds(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('sessions').select('id').execute();
  return rows.map((row) => row.id);
}

export async function updateSession(db: Db, id: string, changes: SessionChanges): Promise<Session | undefined> {
  const values = {
    ...(changes.title !== undefined && { title: changes.title }),
    ...(changes.titleSetByUser !== undefined && { title_set_by_user: changes.titleSetByUser ? 1 : 0 }),
    ...(changes.profileId !== undefined && { profile_id: changes.profileId }),
    ...(changes.pinned !== undefined && { pinned: changes.pinned ? 1 : 0 }),
    ...(changes.contextTokens !== undefined && { context_tokens: changes.contextTokens }),
    ...(changes.model !== undefined && { model: changes.model }),
    ...(changes.shared !== undefined && { shared: changes.shared ? 1 : 0 }),
  };
  if (Object.keys(values).length > 0) await db.updateTable('sessions').set(values).where('id', '=', id).execute();
  return findSession(db, id);
}

/** Sets the title of a session that has none yet and was never titled by the person. */
export async function setTitleIfUntitled(db: Db, id: string, title: string): Promise<void> {
  if (title === '') return;
  await db.updateTable('sessions').set({ title }).where('id', '=', id).where('title', '=', '').where('title_set_by_user', '=', 0).execute();
}

/** Removes the scratchpad and todo list kept under an id (a finished sub-agent's). */
export async function clearSessionWorkState(db: Db, id: string): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('scratchpad_sections').where('session_id', '=', id).execute();
    await transaction.deleteFrom('todo_lists').where('session_id', '=', id).execute();
  });
}

/** Deletes a session and everything stored for it; true when it existed. */
export async function deleteSession(db: Db, id: string): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('scratchpad_sections').where('session_id', '=', id).execute();
    await transaction.deleteFrom('todo_lists').where('session_id', '=', id).execute();
    await transaction.deleteFrom('messages').where('session_id', '=', id).execute();
    await transaction.deleteFrom('session_memory_state').where('session_id', '=', id).execute();
    const result = await transaction.deleteFrom('sessions').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  });
}

/** Every session of one person, with messages or not. */
export async function listSessionIdsOf(db: Db, personId: string): Promise<string[]> {
  const rows = await db.selectFrom('sessions').select('id').where('person_id', '=', personId).execute();
  return rows.map((row) => row.id);
}

/** Gives every session of one person to another (a person leaving the household); returns their ids. */
export async function giveSessionsTo(db: Db, fromPersonId: string, toPersonId: string): Promise<string[]> {
  const rows = await db.updateTable('sessions').set({ person_id: toPersonId }).where('person_id', '=', fromPersonId).returning('id').execute();
  return rows.map((row) => row.id);
}
