import { profileTools } from '../agent/profile-tools.ts';
import type { ModelService } from '../llm/models/model-service.ts';
import type { Profile } from '../profiles/profile.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';

/**
 * Why `model` cannot serve `profile`, or undefined when it can: a model Ollama says does not call
 * tools, for a profile that has tools, would answer without ever using them. Unknown capabilities
 * (an OpenAI-compatible backend, an Ollama that does not say) are not refused.
 */
export async function modelToolsProblem(
  models: Pick<ModelService, 'capabilities' | 'backend'>,
  tools: ToolRegistry,
  profile: Profile,
  model: string,
): Promise<string | undefined> {
  if ((profile.backend ?? models.backend) !== models.backend) return undefined;
  const toolNames = profileTools(profile, tools).map((tool) => tool.name);
  if (toolNames.length === 0) return undefined;
  const { tools: callsTools } = await models.capabilities(model);
  if (callsTools !== false) return undefined;
  return `${model} cannot call tools (Ollama does not list "tools" among its capabilities), and the ${profile.name} profile works through tools (${toolNames.slice(0, 5).join(', ')}${toolNames.length > 5 ? ', …' : ''}). Choose a model that calls tools, such as qwen3.`;
}

/** What PATCH /sessions/:id asks of the models when a session's model is switched. */
export interface SessionModelSwitch {
  /** Why the session's turns under `profileId` cannot use `model`, or undefined when they can. */
  problem(profileId: string, model: string): Promise<string | undefined>;
  /** The session's model was switched: it is loaded ahead of the next turn. */
  switched(model: string): void;
}

export function sessionModelSwitch(models: Pick<ModelService, 'capabilities' | 'backend' | 'warm'>, profiles: Pick<ProfileRegistry, 'get'>, tools: ToolRegistry): SessionModelSwitch {
  return {
    async problem(profileId, model) {
      const profile = profiles.get(profileId);
      return profile ? modelToolsProblem(models, tools, profile, model) : undefined;
    },
    switched: (model) => void models.warm(model),
  };
}
