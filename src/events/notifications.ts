import type { Db } from '../store/database.ts';
import { countUnreadNotifications, insertNotification, type NewNotification, type Notification } from '../store/notifications-repository.ts';
import { onlyFor, type HearthEventHub } from './hearth-events.ts';

/** Stores a notification for its person and tells their open pages at once (docs/agent.md, "Notifications"). */
export class Notifications {
  constructor(
    private readonly db: Db,
    private readonly events: HearthEventHub,
  ) {}

  async raise(notification: NewNotification): Promise<Notification> {
    const { notification: stored, personId } = await insertNotification(this.db, notification);
    const { read_at: _readAt, ...announced } = stored;
    this.events.publish({ type: 'notification', ...announced }, onlyFor(personId));
    return stored;
  }

  /** How many of the person's notifications are unread. */
  unreadCount(personId: string): Promise<number> {
    return countUnreadNotifications(this.db, personId);
  }
}
