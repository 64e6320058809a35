import type { Db } from '../store/database.ts';
import { countUnreadNotifications, insertNotification, type NewNotification, type Notification } from '../store/notifications-repository.ts';
import type { HearthEventHub } from './hearth-events.ts';

/** Stores a notification and tells every open page at once (README: Notifications). */
export class Notifications {
  constructor(
    private readonly db: Db,
    private readonly events: HearthEventHub,
  ) {}

  async raise(notification: NewNotification): Promise<Notification> {
    const stored = await insertNotification(this.db, notification);
    const { read_at: _readAt, ...announced } = stored;
    this.events.publish({ type: 'notification', ...announced });
    return stored;
  }

  unreadCount(): Promise<number> {
    return countUnreadNotifications(this.db);
  }
}
