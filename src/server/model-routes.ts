import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { agentErrorCode } from '../agent/turn.ts';
import { ApiError } from '../errors.ts';
import { modelNameProblem } from '../llm/models/model-names.ts';
import type { ModelService } from '../llm/models/model-service.ts';
import { managesHousehold } from '../people/rights.ts';
import { writeProfileModel } from '../profiles/profile-model.ts';
import { writeProfileTool } from '../profiles/profile-tool-switch.ts';
import { modelToolsProblem } from './model-tools-check.ts';
import { profileEntry, type ProfileEntrySources } from './profile-entry.ts';
import type { AgentDependencies } from '../agent/dependencies.ts';

const modelListTimeoutMs = 10_000;
/** The built-in the owner turns on or off per profile (PATCH /agents/profiles/:id {documents}). */
const documentsSearchTool = 'documents_search';
const modelCallTimeoutMs = 30_000;
const NameBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
type NameBody = Static<typeof NameBody>;
const NameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
type NameParams = Static<typeof NameParams>;
const ProfileParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const ProfileBody = Type.Object(
  { model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), documents: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);

export type ModelRouteOptions = ProfileEntrySources &
  Pick<AgentDependencies, 'profiles'> & {
    models: ModelService;
  };

/** The models of the default backend (docs/protocol.md, "Models"): the Models panel and the model pickers. */
export async function modelRoutes(app: FastifyInstance, options: ModelRouteOptions) {
  const { models, profiles, tools } = options;

  const ownerOnly = (request: FastifyRequest, what: string) => {
    if (!managesHousehold(request.caller.person)) throw new ApiError('forbidden', `Only the owner ${what}: the models are the whole household's.`);
  };
  const validName = (name: string) => {
    const problem = modelNameProblem(name);
    if (problem) throw new ApiError('invalid_request', problem);
    return name;
  };

  // The person picks a session's model from these (the page's model picker, PATCH /sessions/:id {model}).
  app.get('/models', async () => {
    const listed = await models.list(AbortSignal.timeout(modelListTimeoutMs));
    if (!listed.ok) throw new ApiError(agentErrorCode(listed.error.code), listed.error.message);
    return listed.view;
  });

  app.get('/models/loaded', async () => {
    const loaded = await models.loaded(AbortSignal.timeout(modelListTimeoutMs));
    if (!loaded.ok) throw new ApiError(loaded.code, loaded.message);
    return { models: loaded.models };
  });

  app.post<{ Body: NameBody }>('/models/pull', { schema: { body: NameBody } }, async (request, reply) => {
    ownerOnly(request, 'pulls models');
    const name = validName(request.body.name);
    const started = models.pull(name);
    if (!started.ok) throw new ApiError(started.code, started.message);
    return reply.code(202).send({ name });
  });

  app.delete<{ Params: NameParams }>('/models/pulls/:name', { schema: { params: NameParams } }, async (request) => {
    ownerOnly(request, 'cancels pulls');
    if (!models.cancelPull(request.params.name)) throw new ApiError('not_found', `No pull of ${request.params.name} is running.`);
    return { cancelled: true };
  });

  app.delete<{ Params: NameParams }>('/models/:name', { schema: { params: NameParams } }, async (request, reply) => {
    ownerOnly(request, 'deletes models');
    const removed = await models.remove(validName(request.params.name), AbortSignal.timeout(modelCallTimeoutMs));
    if (!removed.ok) throw new ApiError(removed.code, removed.message);
    return reply.code(204).send();
  });

  app.put<{ Body: NameBody }>('/models/default', { schema: { body: NameBody } }, async (request) => {
    ownerOnly(request, 'chooses the default model');
    const name = validName(request.body.name);
    await requireInstalled(models, name);
    await models.setDefault(name);
    return { default_model: models.defaultModel() };
  });

  app.post<{ Body: NameBody }>('/models/warm', { schema: { body: NameBody } }, async (request, reply) => {
    const name = validName(request.body.name);
    if (!models.warm(name)) throw new ApiError('not_supported', `Hearth loads models ahead only with Ollama; the default backend is ${models.backend}.`);
    return reply.code(202).send({ name });
  });

  app.patch<{ Params: Static<typeof ProfileParams>; Body: Static<typeof ProfileBody> }>(
    '/agents/profiles/:id',
    { schema: { params: ProfileParams, body: ProfileBody } },
    async (request) => {
      const { model, documents } = request.body;
      ownerOnly(request, model === undefined ? 'chooses which profiles search the documents' : "chooses a profile's model");
      const profile = profiles.get(request.params.id);
      if (!profile) throw new ApiError('unknown_profile', `There is no profile ${request.params.id}.`);
      const name = model === undefined ? undefined : validName(model);
      const problem = name === undefined ? undefined : await modelToolsProblem(models, tools, profile, name);
      if (problem) throw new ApiError('model_cannot_call_tools', problem);
      if (!profiles.overridesDirectory) throw new ApiError('invalid_request', 'Profiles are read from one folder only here, so Hearth does not write them.');
      if (documents !== undefined && !(await writeProfileTool(profile, profiles.overridesDirectory, documentsSearchTool, documents))) {
        throw new ApiError('invalid_request', `Profile ${profile.id} offers every tool ("*"); edit its file to leave ${documentsSearchTool} out.`);
      }
      if (documents !== undefined) await profiles.reload();
      if (name !== undefined) {
        // Read again after the switch above: the override file it wrote is now the profile's file.
        await writeProfileModel(profiles.get(profile.id) ?? profile, profiles.overridesDirectory, name);
        await profiles.reload();
        models.warm(name);
      }
      return profileEntry(profiles.get(profile.id) ?? profile, request, options);
    },
  );
}

/** With Ollama, only a model it has can be the default (pull it first); other backends' lists are not checked. */
async function requireInstalled(models: ModelService, name: string): Promise<void> {
  if (models.backend !== 'ollama') return;
  const listed = await models.list(AbortSignal.timeout(modelListTimeoutMs));
  if (!listed.ok) throw new ApiError(agentErrorCode(listed.error.code), listed.error.message);
  if (!listed.view.models.some((model) => model.name === name)) throw new ApiError('model_not_found', `Ollama has no model named ${name}: pull it first.`);
}
