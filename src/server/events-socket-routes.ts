import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import type { ApprovalGate } from '../agent/approval-gate.ts';
import type { Audience, HearthEvent, HearthEventHub } from '../events/hearth-events.ts';
import type { AccessEnds } from '../household/ended-access.ts';
import type { Notifications } from '../events/notifications.ts';
import type { BackendStatusMonitor } from '../llm/backend-status.ts';
import type { PullState } from '../llm/models/pull-state.ts';
import { managesHousehold } from '../people/rights.ts';
import type { Sessions } from '../sessions/sessions.ts';
import { signedOutCloseCode } from './websocket-routes.ts';

/** `/ws/events` (docs/protocol.md, "The events socket"): one socket per open page for what concerns the whole Hearth. */
export interface EventsSocketOptions {
  events: HearthEventHub;
  notifications: Notifications;
  approvals: ApprovalGate;
  backendStatus: BackendStatusMonitor;
  /** Who may see a session: its sessions_changed reach only their pages. */
  sessions: Pick<Sessions, 'seenBy'>;
  /** The sign-in, token or role the socket was opened with ended: it closes with 4001. */
  ends: Pick<AccessEnds, 'whenEnded'>;
  /** The model pulls under way, which a page opened mid-pull shows (those who may pull only). */
  modelPulls: () => PullState[];
}

export async function eventsSocketRoutes(app: FastifyInstance, options: EventsSocketOptions) {
  const { events, notifications, approvals, backendStatus, sessions, ends, modelPulls } = options;
  // What is published without an audience and still concerns only some: news of a session (a run's start and end).
  const audienceOf = (event: HearthEvent): Audience | undefined => (event.type === 'sessions_changed' ? sessions.seenBy(event.session_id) : undefined);

  app.get('/ws/events', { websocket: true }, async (socket: WebSocket, request) => {
    const person = request.caller.person;
    // Waiting calls reach the pages of those who may decide them, and the asker's page (can_decide says which);
    // a change among others' calls that leaves this person's list as it was is not sent.
    let toldPending = '';
    const send = (event: HearthEvent) => {
      if (socket.readyState !== socket.OPEN) return;
      if (event.type === 'approvals_changed') {
        const pending = JSON.stringify(approvals.pendingFor(person));
        if (pending === toldPending) return;
        toldPending = pending;
        return socket.send(`{"type":"approvals_changed","pending":${pending}}`);
      }
      socket.send(JSON.stringify(event));
    };
    // Notifications raised while the count is read are sent after hello: a page may count one twice, never miss one.
    const held: HearthEvent[] = [];
    const unsubscribe = events.subscribeFor(person, (event) => {
      if (event.type === 'notification') held.push(event);
    });
    const unreadNotifications = await notifications.unreadCount(person.id);
    unsubscribe();
    if (socket.readyState !== socket.OPEN) return;
    // Nothing is read from this socket; a client that writes to it is ignored, not answered.
    // Each page hears only what is its person's: their notifications, sessions they can see.
    socket.on('close', events.subscribeFor(person, send, audienceOf));
    socket.on('close', ends.whenEnded(request.caller, () => socket.close(signedOutCloseCode, 'signed out')));
    const pendingApprovals = approvals.pendingFor(person);
    toldPending = JSON.stringify(pendingApprovals);
    const pulls = managesHousehold(person) ? modelPulls() : [];
    send({ type: 'hello', unread_notifications: unreadNotifications, pending_approvals: pendingApprovals, backend: backendStatus.current(), model_pulls: pulls });
    for (const event of held) send(event);
  });
}
