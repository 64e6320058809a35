import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import { firstOwnerId } from './first-owner.ts';
import type { NotificationsTable } from './schema.ts';

/** Something finished or needs the person's attention (README: Notifications). */
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

export async function insertNotification(db: Db, notification: NewNotification): Promise<Notification> {
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
  return fromRow(row);
}

/** Newest first. */
export async function listNotifications(db: Db, options: { unreadOnly: boolean; limit: number }): Promise<Notification[]> {
  let query = db.selectFrom('notifications').selectAll().orderBy('id', 'desc').limit(options.limit);
  if (options.unreadOnly) query = query.where('read_at', 'is', null);
  return (await query.execute()).map(fromRow);
}

export async function countUnreadNotifications(db: Db): Promise<number> {
  const { count } = await db
    .selectFrom('notifications')
    .select((expression) => expression.fn.countAll<number>().as('count'))
    .where('read_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** False when no notification has that id; reading one already read changes nothing. */
export async function markNotificationRead(db: Db, id: number): Promise<boolean> {
  const found = await db.selectFrom('notifications').select('id').where('id', '=', id).executeTakeFirst();
  if (!found) return false;
  await db.updateTable('notifications').set({ read_at: new Date().toISOString() }).where('id', '=', id).where('read_at', 'is', null).execute();
  return true;
}

/** Answers how many were unread. */
export async function markAllNotificationsRead(db: Db): Promise<number> {
  const result = await db.updateTable('notifications').set({ read_at: new Date().toISOString() }).where('read_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}
