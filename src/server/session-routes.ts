import { readFile } from 'node:fs/promises';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { agentErrorCode, type TurnOutcome } from '../agent/turn.ts';
import { ApiError } from '../errors.ts';
import type { Household } from '../household/household.ts';
import type { SendResult, Session, Sessions } from '../sessions/sessions.ts';
import { EditBody, maxMessageBytes, MessageBody, oversizedImage } from './client-commands.ts';
import type { SessionModelSwitch } from './model-tools-check.ts';
import { ownSession, sessionToChange } from './own-session.ts';

const SessionParams = Type.Object({ id: Type.String() });
type SessionParams = Static<typeof SessionParams>;
const CreateBody = Type.Union([
  Type.Object({ profile_id: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false }),
  Type.Null(),
]);
const PatchBody = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 200 })),
    profile_id: Type.Optional(Type.String({ minLength: 1 })),
    pinned: Type.Optional(Type.Boolean()),
    /** Shared with the household; only the session's person may change it. */
    shared: Type.Optional(Type.Boolean()),
    /** The model this session's turns use; null returns to the profile's. */
    model: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
  },
  { additionalProperties: false },
);
type PatchBody = Static<typeof PatchBody>;
const MessageParams = Type.Object({ id: Type.String(), message_id: Type.String({ pattern: '^[1-9][0-9]{0,14}$' }) });
const PinBody = Type.Object({ pinned: Type.Boolean() }, { additionalProperties: false });
/**
 * How long a REST turn's request waits: until the turn ends or a call waits for a person (202, the
 * default), or until it ends whatever it waits for (`end`, up to the approval timeout).
 */
const Wait = Type.Union([Type.Literal('approval'), Type.Literal('end')]);
type Wait = Static<typeof Wait>;
const RestMessageBody = Type.Composite([MessageBody, Type.Object({ wait: Type.Optional(Wait) })], { additionalProperties: false });
const RestEditBody = Type.Composite([EditBody, Type.Object({ wait: Type.Optional(Wait) })], { additionalProperties: false });
const RegenerateBody = Type.Union([Type.Object({ wait: Type.Optional(Wait) }, { additionalProperties: false }), Type.Null()]);

export interface SessionRouteOptions {
  sessions: Sessions;
  /** The window of the backend a session's turns go to: its context meter's maximum. */
  contextWindow: (session: Session) => number;
  /** Whose a session is, by name (a shared session says so). */
  household: Pick<Household, 'person'>;
  /** A model switched by PATCH {model}: refused when it cannot call the profile's tools, else loaded ahead. */
  modelSwitch?: SessionModelSwitch;
}

export async function sessionRoutes(app: FastifyInstance, options: SessionRouteOptions) {
  const { sessions, contextWindow, household, modelSwitch } = options;

  const summary = async (session: Session) => ({
    session_id: session.id,
    title: session.title,
    profile_id: session.profileId,
    pinned: session.pinned,
    created_at: session.createdAt,
    last_active: session.lastActive,
    running: sessions.isRunning(session.id),
    model: session.model,
    // Only a channel's session carries it (`telegram`): the page marks those.
    ...(session.origin !== null && { origin: session.origin }),
    shared: session.shared,
    owner: await ownerOf(session),
  });
  const ownerOf = async (session: Session) => {
    const person = await household.person(session.personId);
    return person ? { id: person.id, name: person.name } : null;
  };

  app.post<{ Body: Static<typeof CreateBody> }>('/sessions', { schema: { body: CreateBody } }, async (request, reply) => {
    // Not announced: the list shows a session from its first message on (docs/protocol.md, "REST API", `GET /sessions`).
    const created = await sessions.create({
      ...(request.body?.profile_id !== undefined && { profileId: request.body.profile_id }),
      personId: request.caller.person.id,
    });
    if (!created.ok) throw new ApiError(created.code, created.message);
    const { session } = created;
    return reply.code(201).send({
      session_id: session.id,
      profile_id: session.profileId,
      title: session.title,
      created_at: session.createdAt,
    });
  });

  app.get('/sessions', async (request) => Promise.all((await sessions.listFor(request.caller.person)).map(summary)));

  app.get<{ Params: SessionParams }>('/sessions/:id', { schema: { params: SessionParams } }, async (request) => {
    const session = await ownSession(sessions, request, request.params.id);
    const approvals = sessions.waitingApprovals(session.id, request.caller.person);
    const state = approvals.length > 0 ? 'waiting_for_approval' : sessions.isRunning(session.id) ? 'running' : 'idle';
    return { ...(await summary(session)), state, approvals, messages: await sessions.messages(session.id, 'display') };
  });

  app.get<{ Params: SessionParams }>('/sessions/:id/context', { schema: { params: SessionParams } }, async (request) => {
    const session = await ownSession(sessions, request, request.params.id);
    return {
      messages: await sessions.messages(session.id, 'context'),
      context_tokens: session.contextTokens,
      max_context_tokens: contextWindow(session),
    };
  });

  app.get<{ Params: { id: string; name: string } }>(
    '/sessions/:id/images/:name',
    { schema: { params: Type.Object({ id: Type.String(), name: Type.String() }) } },
    async (request, reply) => {
      const session = await ownSession(sessions, request, request.params.id);
      const image = sessions.image(session.id, request.params.name);
      const bytes = image && (await readFile(image.file).catch(() => undefined));
      if (!image || !bytes) throw new ApiError('not_found', `Session ${session.id} has no image ${request.params.name}.`);
      return reply.type(image.mediaType).header('cache-control', 'private, max-age=31536000, immutable').send(bytes);
    },
  );

  const patch = async (request: FastifyRequest, id: string, body: PatchBody) => {
    const session = await sessionToChange(sessions, request, id);
    const problem = body.model && (await modelSwitch?.problem(body.profile_id ?? session.profileId, body.model));
    if (problem) throw new ApiError('model_cannot_call_tools', problem);
    const updated = await sessions.update(id, {
      ...(body.title !== undefined && { title: body.title }),
      ...(body.pinned !== undefined && { pinned: body.pinned }),
      ...(body.model !== undefined && { model: body.model }),
      ...(body.profile_id !== undefined && { profileId: body.profile_id }),
      ...(body.shared !== undefined && { shared: body.shared }),
    });
    if (!updated.ok) throw new ApiError(updated.code, updated.message);
    if (body.model) modelSwitch?.switched(body.model);
    return summary(updated.session);
  };
  app.patch<{ Params: SessionParams; Body: PatchBody }>(
    '/sessions/:id',
    { schema: { params: SessionParams, body: PatchBody } },
    (request) => patch(request, request.params.id, request.body),
  );
  app.patch<{ Params: SessionParams; Body: Static<typeof PinBody> }>(
    '/sessions/:id/pin',
    { schema: { params: SessionParams, body: PinBody } },
    (request) => patch(request, request.params.id, { pinned: request.body.pinned }),
  );

  app.delete<{ Params: SessionParams }>('/sessions/:id', { schema: { params: SessionParams } }, async (request, reply) => {
    await sessionToChange(sessions, request, request.params.id);
    await sessions.delete(request.params.id);
    return reply.code(204).send();
  });

  /** A turn's answer once it ends (POST /messages, /regenerate, /edit). */
  const ended = async (session: Session, outcome: TurnOutcome) => {
    if (outcome.status === 'failed') throw new ApiError(agentErrorCode(outcome.error.code), outcome.error.message);
    if (outcome.status === 'refused') throw new ApiError(outcome.error.code, outcome.error.message);
    return {
      content: outcome.content,
      stopped: outcome.status === 'stopped',
      context_tokens: outcome.status === 'completed' ? outcome.contextTokens : ((await sessions.find(session.id))?.contextTokens ?? session.contextTokens),
      max_context_tokens: contextWindow(session),
    };
  };

  /**
   * The turn's answer when it ends, or 202 `waiting_for_approval` with the calls waiting for a
   * person as soon as one waits (the run goes on; decide with POST /sessions/:id/approvals/:call_id).
   */
  const answer = async (request: FastifyRequest, reply: FastifyReply, session: Session, sent: SendResult, wait: Wait = 'approval') => {
    if (!sent.ok) throw new ApiError('session_busy', 'This session is already answering a message; stop it or wait.');
    if (wait === 'end') return ended(session, await sent.outcome);
    const giveUp = new AbortController();
    const first = await Promise.race([
      sent.outcome.then((outcome) => ({ outcome })),
      sessions.untilApprovalWaits(session.id, request.caller.person, giveUp.signal).then((approvals) => ({ approvals })),
    ]).finally(() => giveUp.abort());
    if ('outcome' in first) return ended(session, first.outcome);
    return reply.code(202).send({ status: 'waiting_for_approval', approvals: first.approvals });
  };

  app.post<{ Params: SessionParams; Body: Static<typeof RestMessageBody> }>(
    '/sessions/:id/messages',
    { schema: { params: SessionParams, body: RestMessageBody }, bodyLimit: maxMessageBytes },
    async (request, reply) => {
      const session = await ownSession(sessions, request, request.params.id);
      const { wait, ...input } = request.body;
      const oversized = oversizedImage(input.images, (index) => `"images.${index}"`);
      if (oversized) throw new ApiError('invalid_request', `Invalid body: ${oversized}.`);
      return answer(request, reply, session, sessions.send(session.id, input, request.caller.person.id), wait);
    },
  );

  app.post<{ Params: SessionParams; Body: Static<typeof RegenerateBody> }>(
    '/sessions/:id/regenerate',
    { schema: { params: SessionParams, body: RegenerateBody } },
    async (request, reply) => {
      const session = await ownSession(sessions, request, request.params.id);
      return answer(request, reply, session, sessions.regenerate(session.id, request.caller.person.id), request.body?.wait);
    },
  );

  app.post<{ Params: Static<typeof MessageParams>; Body: Static<typeof RestEditBody> }>(
    '/sessions/:id/messages/:message_id/edit',
    { schema: { params: MessageParams, body: RestEditBody }, bodyLimit: maxMessageBytes },
    async (request, reply) => {
      const session = await ownSession(sessions, request, request.params.id);
      const edited = sessions.edit(session.id, Number(request.params.message_id), request.body.content, request.caller.person.id);
      return answer(request, reply, session, edited, request.body.wait);
    },
  );

  app.post<{ Params: SessionParams }>('/sessions/:id/stop', { schema: { params: SessionParams } }, async (request) => {
    await ownSession(sessions, request, request.params.id);
    return { stopped: sessions.stop(request.params.id) };
  });
}
