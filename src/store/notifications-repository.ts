import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import { firstOwnerId } from './first-owner.ts';
import type { NotificationsTable } from './schema.ts';

/** Something finished or needs the person's attention (docs/agent.md, "Notifications"). */
export interface Notification {
  id: number;
  title: string;
  body: string;
  session_id?: string;
  created_at: string;
  read_at: string | null;
}

export interface NewNotification {
  title: string;
  body: string;
  sessionId?: string;
  /** Whom it is for; the first owner when not named. */
  personId?: string;
}

function fromRow(row: Selectable<NotificationsTable>): Notification {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    ...(row.session_id !== null && { session_id: row.session_id }),
    created_at: row.created_at,
    read_at: row.read_at,
  };
}

/** The stored notification, and whom it is for. */
export async function insertNotification(db: Db, notification: NewNotification): Promise<{ notification: Notification; personId: string }> {
  const row = await db
    .insertInto('notifications')
    .values({
      title: notification.title,
      body: notification.body,
      session_id: notification.sessionId ?? null,
      created_at: new Date().toISOString(),
      read_at: null,
      person_id: notification.personId ?? firstOwnerId(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { notification: fromRow(row), personId: row.person_id };
}

/** Newest first; only one person's when `personId` is given. */
export async function listNotifications(db: Db, options: { unreadOnly: boolean; limit: number; personId?: string }): Promise<Notification[]> {
  let query = db.selectFrom('notifications').selectAll().orderBy('id', 'desc').limit(options.limit);
  if (options.unreadOnly) query = query.where('read_at', 'is', null);
  if (options.personId !== undefined) query = query.where('person_id', '=', options.personId);
  return (await query.execute()).map(fromRow);
}

export async function countUnreadNotifications(db: Db, personId: string): Promise<number> {
  const { count } = await db
    .selectFrom('notifications')
    .select((expression) => expression.fn.countAll<number>().as('count'))
    .where('read_at', 'is', null)
    .where('person_id', '=', personId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** False when the person has no notification of that id (someone else's answers as a missing one); reading one already read changes nothing. */
export async function markNotificationRead(db: Db, id: number, personId: string): Promise<boolean> {
  const found = await db.selectFrom('notifications').select('id').where('id', '=', id).where('person_id', '=', personId).executeTakeFirst();
  if (!found) return false;
  await db.updateTable('notifications').set({ read_at: new Date().toISOString() }).where('id', '=', id).where('read_at', 'is', null).execute();
  return true;
}

/** Marks the person's unread notifications read; answers how many there were. */
export async function markAllNotificationsRead(db: Db, personId: string): Promise<number> {
  const result = await db
    .updateTable('notifications')
    .set({ read_at: new Date().toISOString() })
    .where('read_at', 'is', null)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A person's notifications, when they leave the household. */
export async function deleteNotificationsOf(db: Db, personId: string): Promise<number> {
  const result = await db.deleteFrom('notifications').where('person_id', '=', personId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
