import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import type { ApprovalGate } from '../agent/approval-gate.ts';
import type { HearthEvent, HearthEventHub } from '../events/hearth-events.ts';
import type { Notifications } from '../events/notifications.ts';
import type { BackendStatusMonitor } from '../llm/backend-status.ts';

/** `/ws/events` (README: The events socket): one socket per open page for what concerns the whole Hearth. */
export interface EventsSocketOptions {
  events: HearthEventHub;
  notifications: Notifications;
  approvals: ApprovalGate;
  backendStatus: BackendStatusMonitor;
}

export async function eventsSocketRoutes(app: FastifyInstance, options: EventsSocketOptions) {
  const { events, notifications, approvals, backendStatus } = options;

  app.get('/ws/events', { websocket: true }, async (socket: WebSocket) => {
    const send = (event: HearthEvent) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
    };
    // Notifications raised while the count is read are sent after hello: a page may count one twice, never miss one.
    const held: HearthEvent[] = [];
    const unsubscribe = events.subscribe((event) => {
      if (event.type === 'notification') held.push(event);
    });
    const unreadNotifications = await notifications.unreadCount();
    unsubscribe();
    if (socket.readyState !== socket.OPEN) return;
    // Nothing is read from this socket; a client that writes to it is ignored, not answered.
    socket.on('close', events.subscribe(send));
    send({ type: 'hello', unread_notifications: unreadNotifications, pending_approvals: approvals.pending(), backend: backendStatus.current() });
    for (const event of held) send(event);
  });
}
