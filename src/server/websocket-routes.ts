import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import type { HearthEventHub } from '../events/hearth-events.ts';
import type { AccessEnds } from '../household/ended-access.ts';
import type { AgentEvent } from '../protocol/events.ts';
import type { SendResult, Sessions } from '../sessions/sessions.ts';
import { notJsonFrameMessage, validateClientFrame } from './client-frames.ts';
import type { JsonParser } from './json-parser.ts';

export const unknownSessionCloseCode = 4004;
/** The sign-in, token or role a socket was opened with ended: it opens again only as who the person now is. */
export const signedOutCloseCode = 4001;

export interface WebsocketRoutesOptions {
  sessions: Sessions;
  events: HearthEventHub;
  jsonParser: JsonParser;
  ends: Pick<AccessEnds, 'whenEnded'>;
}

export async function websocketRoutes(app: FastifyInstance, options: WebsocketRoutesOptions) {
  const { sessions, events, jsonParser, ends } = options;

  app.get<{ Params: { id: string } }>('/ws/sessions/:id', { websocket: true }, async (socket: WebSocket, request) => {
    const sessionId = request.params.id;
    // Frames that arrive while the session is looked up are held, not lost.
    const early: Buffer[] = [];
    const hold = (data: Buffer) => early.push(data);
    socket.on('message', hold);
    // Someone else's session is refused exactly as a missing one.
    const session = await sessions.findFor(request.caller.person, sessionId);
    if (!session) {
      socket.close(unknownSessionCloseCode, 'session not found');
      return;
    }
    if (socket.readyState !== socket.OPEN) return;

    const person = request.caller.person;
    const send = (event: AgentEvent) => {
      if (socket.readyState !== socket.OPEN) return;
      // Each watcher learns whether the call is theirs to decide: a child's page shows its own ask waiting, without buttons.
      const told = event.type === 'approval_required' ? { ...event, can_decide: sessions.mayDecide(sessionId, event.call_id, person) === true } : event;
      socket.send(JSON.stringify(told));
    };
    const unsubscribe = sessions.follow(sessionId, send);
    // A session deleted elsewhere, or no longer shared with this person, ends their sockets as an unknown one would.
    const stopWatching = events.subscribe((event, audience) => {
      if (event.type !== 'sessions_changed' || event.change !== 'deleted' || event.session_id !== sessionId) return;
      void Promise.resolve(audience?.(person) ?? true).then((lost) => {
        if (lost) socket.close(unknownSessionCloseCode, 'session not found');
      });
    });
    const stopAccess = ends.whenEnded(request.caller, () => socket.close(signedOutCloseCode, 'signed out'));
    socket.on('close', () => {
      unsubscribe();
      stopWatching();
      stopAccess();
    });

    const refuseWhenBusy = (sent: SendResult) => {
      if (!sent.ok) send({ type: 'error', code: 'session_busy', message: 'This session is already answering; stop it or wait for the answer.' });
    };
    const receive = async (frame: Buffer) => {
      const json = await jsonParser.parse(frame);
      if (!json.ok) return send({ type: 'error', code: 'invalid_frame', message: notJsonFrameMessage });
      const parsed = validateClientFrame(json.value);
      if (!parsed.ok) return send({ type: 'error', code: 'invalid_frame', message: parsed.message });
      const { command } = parsed;
      switch (command.type) {
        case 'message': {
          const { type: _type, ...input } = command;
          return refuseWhenBusy(sessions.send(sessionId, input, person.id));
        }
        case 'regenerate':
          return refuseWhenBusy(sessions.regenerate(sessionId, person.id));
        case 'edit':
          return refuseWhenBusy(sessions.edit(sessionId, command.message_id, command.content, person.id));
        case 'stop':
          sessions.stop(sessionId);
          return;
        case 'approve': {
          const { call_id: callId, decision, remember } = command;
          const decided = await sessions.decide(sessionId, callId, { decision, remember, decider: person, via: 'page' });
          if (decided.ok) return;
          // The socket is open, so its person sees the session: a refusal is `forbidden` or `approval_not_found`.
          if (decided.code === 'forbidden') return send({ type: 'error', code: 'forbidden', message: decided.message });
          return send({ type: 'error', code: 'approval_not_found', message: `No call ${callId} is waiting for a decision in this session.` });
        }
      }
    };
    // A large frame is parsed off the event loop; frames are still acted on in the order they came.
    let received: Promise<void> = Promise.resolve();
    const enqueue = (frame: Buffer) => {
      received = received.then(() => receive(frame));
    };
    socket.off('message', hold);
    socket.on('message', enqueue);
    for (const frame of early) enqueue(frame);
  });
}
