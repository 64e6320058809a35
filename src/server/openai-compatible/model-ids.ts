/** How a Hearth profile, and a profile with one of the default backend's models, is named to an OpenAI client. */
const prefix = 'hearth/';

export interface ModelChoice {
  profileId: string;
  /** A model of the default backend the turn uses instead of the profile's; absent: the profile's own. */
  model?: string;
}

/** `hearth/<profile>`, or `hearth/<profile>:<model>`. */
export function modelId(choice: ModelChoice): string {
  return choice.model === undefined ? `${prefix}${choice.profileId}` : `${prefix}${choice.profileId}:${choice.model}`;
}

/**
 * The profile (and model) a request's `model` names; undefined when it is not one of Hearth's.
 * The profile ends at the first colon: profile ids have none, and model names keep theirs (`llama3.2:3b`).
 */
export function parseModelId(id: string): ModelChoice | undefined {
  if (!id.startsWith(prefix)) return undefined;
  const rest = id.slice(prefix.length);
  const colon = rest.indexOf(':');
  if (colon < 0) return rest === '' ? undefined : { profileId: rest };
  const profileId = rest.slice(0, colon);
  const model = rest.slice(colon + 1);
  return profileId === '' || model === '' ? undefined : { profileId, model };
}
