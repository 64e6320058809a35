import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Notifications } from '../events/notifications.ts';
import { ApiError } from '../errors.ts';
import type { Db } from '../store/database.ts';
import { listNotifications, markAllNotificationsRead, markNotificationRead } from '../store/notifications-repository.ts';

const ListQuery = Type.Object(
  {
    unread: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0')])),
    // Query strings are text; the route reads the number itself (bodies are validated without coercion).
    limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$|^1000$' })),
  },
  { additionalProperties: false },
);
const ReadParams = Type.Object({ id: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }) });

/** The caller's notifications and marking them read (docs/agent.md, "Notifications"); raising one is the agent's. Nobody sees another's. */
export async function notificationRoutes(app: FastifyInstance, options: { db: Db; notifications: Notifications }) {
  const { db } = options;

  app.get<{ Querystring: Static<typeof ListQuery> }>('/notifications', { schema: { querystring: ListQuery } }, async (request) => {
    const { unread = '0', limit = '100' } = request.query;
    const personId = request.caller.person.id;
    const notifications = await listNotifications(db, { unreadOnly: unread === '1', limit: Number(limit), personId });
    return { notifications, unread_count: await options.notifications.unreadCount(personId) };
  });

  app.post<{ Params: Static<typeof ReadParams> }>('/notifications/:id/read', { schema: { params: ReadParams } }, async (request) => {
    const id = Number(request.params.id);
    if (!(await markNotificationRead(db, id, request.caller.person.id))) throw new ApiError('notification_not_found', `No notification with id ${id}.`);
    return { id, read: true };
  });

  app.post('/notifications/read-all', async (request) => ({ read: await markAllNotificationsRead(db, request.caller.person.id) }));
}
