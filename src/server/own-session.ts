import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import type { Session, Sessions } from '../sessions/sessions.ts';

/**
 * The session `id` when the request's person may see and use it (their own, or one shared with
 * them); someone else's answers 404 `session_not_found`, word for word as a missing one.
 * Every `/sessions/:id…` route and the session socket start here.
 */
export async function ownSession(sessions: Pick<Sessions, 'findFor'>, request: FastifyRequest, id: string): Promise<Session> {
  const session = await sessions.findFor(request.caller.person, id);
  if (!session) throw new ApiError('session_not_found', `No session with id ${id}.`);
  return session;
}

/**
 * As `ownSession`, for what only the session's own person may do (rename, share, switch its
 * profile, delete): someone it is shared with gets 403 `forbidden`.
 */
export async function sessionToChange(sessions: Pick<Sessions, 'findFor'>, request: FastifyRequest, id: string): Promise<Session> {
  const session = await ownSession(sessions, request, id);
  if (session.personId !== request.caller.person.id) {
    throw new ApiError('forbidden', 'This session is shared with you: only the person whose it is may rename, share, switch or delete it.');
  }
  return session;
}
