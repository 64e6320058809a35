import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { BackendId } from '../../backend-ids.ts';
import { ApiError } from '../../errors.ts';
import type { ModelList } from '../../llm/types.ts';
import type { Person } from '../../people/person.ts';
import type { Session, SessionResult, Sessions, SwitchedProfile } from '../../sessions/sessions.ts';
import { maxMessageBytes } from '../client-commands.ts';
import type { SessionModelSwitch } from '../model-tools-check.ts';
import { ChatCompletionBody, conversationOf, seededContent, type Conversation } from './chat-request.ts';
import { streamAnswer, wholeAnswer } from './chat-answers.ts';
import { modelId, parseModelId, type ModelChoice } from './model-ids.ts';
import { asOpenAiError, openAiError } from './openai-errors.ts';

const modelListTimeoutMs = 10_000;

export interface OpenAiRouteOptions {
  sessions: Sessions;
  /** The default backend's models, offered with each profile that uses that backend. */
  backends: { readonly defaultBackend: BackendId; defaultModels(signal: AbortSignal): Promise<ModelList> };
  /** The backend a profile's turns go to. */
  profileBackend(profileId: string): BackendId;
  /** A session's model chosen by a `hearth/<profile>:<model>` pair: refused when it cannot call the profile's tools, else loaded ahead (as PATCH /sessions/:id). */
  modelSwitch?: SessionModelSwitch;
  /** `created` of every listed model: when this server started, in seconds. */
  startedAt?: number;
}

/**
 * The OpenAI-compatible front door (docs/openai-compatible.md): `GET /v1/models` and
 * `POST /v1/chat/completions`, a Hearth turn in a session kept per conversation. Registered behind
 * `identify()`, with its errors in OpenAI's shape.
 */
export async function openAiRoutes(app: FastifyInstance, options: OpenAiRouteOptions) {
  const { sessions, backends, profileBackend, modelSwitch } = options;
  const created = options.startedAt ?? Math.floor(Date.now() / 1000);

  // Every client sends a key: one that names nobody is refused, even where a one-person loopback
  // Hearth would let a request without one through as its owner.
  app.addHook('onRequest', async (request, reply) => {
    const bearer = /^Bearer\s+(\S+)/.exec(request.headers.authorization ?? '');
    if (bearer && request.caller.via === 'loopback') {
      return reply.code(401).send(openAiError(401, 'unauthorized', 'That API key is not one of this Hearth: use a personal API token (the account menu, "Personal API tokens") or AUTH_TOKEN.'));
    }
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
    return asOpenAiError(reply.statusCode, payload) ?? payload;
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(openAiError(404, 'not_found', `No route for ${request.method} ${request.url.split('?')[0]}: this Hearth serves GET /v1/models and POST /v1/chat/completions.`));
  });

  app.get('/models', async (request) => {
    const person = request.caller.person;
    const profiles = sessions.knownProfiles().filter((id) => sessions.mayUseProfile(person, id));
    const listed = await backends.defaultModels(AbortSignal.timeout(modelListTimeoutMs));
    const models = listed.ok ? listed.models.map((model) => model.name) : [];
    const choices: ModelChoice[] = profiles.flatMap((profileId) => [
      { profileId },
      ...(profileBackend(profileId) === backends.defaultBackend ? models.map((model) => ({ profileId, model })) : []),
    ]);
    return { object: 'list', data: choices.map((choice) => ({ id: modelId(choice), object: 'model', created, owned_by: 'hearth' })) };
  });

  app.post<{ Body: ChatCompletionBody }>(
    '/chat/completions',
    { schema: { body: ChatCompletionBody }, bodyLimit: maxMessageBytes },
    async (request, reply) => {
      const person = request.caller.person;
      const choice = await chosenModel(person, request.body.model);
      const parsed = conversationOf(person.id, request.body);
      if (!parsed.ok) throw new ApiError('invalid_request', parsed.message);
      const { session, isNew } = await sessionFor(person, parsed.conversation, choice);
      const { conversation } = parsed;
      const input = { content: isNew ? seededContent(conversation) : conversation.content, ...(conversation.images.length > 0 && { images: conversation.images }) };
      const sent = sessions.send(session.id, input, person.id);
      if (!sent.ok) throw busy();
      const identity = { id: `chatcmpl-${randomUUID()}`, model: request.body.model, created: Math.floor(Date.now() / 1000) };
      return request.body.stream === true
        ? streamAnswer({ reply, sessions, sessionId: session.id, identity })
        : wholeAnswer({ reply, sessions, sessionId: session.id, identity, outcome: sent.outcome });
    },
  );

  /** The profile (and model) the request names, when the caller may use it. */
  async function chosenModel(person: Person, id: string): Promise<ModelChoice> {
    const choice = parseModelId(id);
    if (!choice || !sessions.hasProfile(choice.profileId)) throw new ApiError('model_not_found', `The model "${id}" is not one of this Hearth's: GET /v1/models lists them (hearth/<profile> or hearth/<profile>:<model>).`);
    if (!sessions.mayUseProfile(person, choice.profileId)) {
      throw new ApiError('forbidden', `${person.name} may not use the profile "${sessions.profileName(choice.profileId)}": GET /v1/models lists the ones you may.`);
    }
    if (choice.model !== undefined) {
      const offered = profileBackend(choice.profileId) === backends.defaultBackend && (await modelsOfDefaultBackend()).includes(choice.model);
      if (!offered) throw new ApiError('model_not_found', `The model "${id}" is not one of this Hearth's: "${choice.model}" is not a model of the profile's backend. GET /v1/models lists them.`);
      const problem = await modelSwitch?.problem(choice.profileId, choice.model);
      if (problem) throw new ApiError('model_cannot_call_tools', problem);
    }
    return choice;
  }

  async function modelsOfDefaultBackend(): Promise<string[]> {
    const listed = await backends.defaultModels(AbortSignal.timeout(modelListTimeoutMs));
    return listed.ok ? listed.models.map((model) => model.name) : [];
  }

  /** The conversation's session, found by its key; a new one (bound to the key) when it has none. */
  async function sessionFor(person: Person, conversation: Conversation, choice: ModelChoice): Promise<{ session: Session; isNew: boolean }> {
    const existing = conversation.continues ? await sessions.findByKey(conversation.key) : undefined;
    if (existing && sessions.visibleTo(person, existing)) {
      // Before its profile or model would change under the turn it runs.
      if (sessions.isRunning(existing.id)) throw busy();
      return { session: await chosenFor(existing, choice), isNew: false };
    }
    // Seeded with a transcript, the session is titled by the conversation's first message, not by the transcript's heading.
    const seeded = conversation.earlier !== '' && conversation.title !== '';
    const made = await sessions.create({ profileId: choice.profileId, origin: 'openai', personId: person.id, ...(seeded && { title: conversation.title }) });
    if (!made.ok) throw new ApiError(made.code, made.message);
    await sessions.bindKey(conversation.key, made.session.id);
    return { session: await chosenFor(made.session, choice), isNew: true };
  }

  /** The session under the profile and model the request names: a client may switch either between requests. */
  async function chosenFor(session: Session, choice: ModelChoice): Promise<Session> {
    let current = session;
    if (current.profileId !== choice.profileId) current = refusedOr(await sessions.switchProfile(current.id, choice.profileId, 'user'));
    const model = choice.model ?? null;
    if (current.model === model) return current;
    current = refusedOr(await sessions.update(current.id, { model }));
    if (model) modelSwitch?.switched(model);
    return current;
  }
}

function busy(): ApiError {
  return new ApiError('session_busy', "This conversation's Hearth session is still answering: wait for it, or stop it in Hearth's page.");
}

function refusedOr(result: SessionResult | SwitchedProfile): Session {
  if (!result.ok) throw new ApiError(result.code, result.message);
  return result.session;
}
