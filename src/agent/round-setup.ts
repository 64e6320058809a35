import type { BackendPreference, BackendRegistry } from '../llm/backend-registry.ts';
import type { LlmError } from '../llm/types.ts';
import type { ApprovalPolicy } from '../approvals/policy.ts';
import type { Profile } from '../profiles/profile.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import type { Session } from '../store/sessions-repository.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import type { RoundSetup } from './agent-loop.ts';
import { profileTools } from './profile-tools.ts';
import { buildSystemPrompt } from './system-prompt.ts';

export type ProfileSetup = { ok: true; profile: Profile; setup: RoundSetup } | { ok: false; error: LlmError };

/** A stored session as it was read for a call, with that call's setup. */
export type SessionSetup = ProfileSetup & { session: Session | undefined };

/** What a round's setup is made from. */
export interface SetupSources {
  profiles: ProfileRegistry;
  backends: BackendRegistry;
  tools: ToolRegistry;
  persona: string;
  /** The person's long-term memory summary, if they have one (guests never do). */
  memorySummary: (personId: string) => Promise<string | undefined>;
}

/** Tools a sub-agent never gets: it cannot spawn further agents or change its parent's profile. */
const parentOnlyTools = new Set(['spawn_agent', 'switch_profile']);

/** Which backend, model, prompt and tools a call for this profile uses. */
export function setupForProfile(
  profile: Profile,
  sources: Pick<SetupSources, 'backends' | 'tools' | 'persona'>,
  options: {
    subagent?: boolean;
    memory?: string | undefined;
    governingPolicies?: readonly ApprovalPolicy[];
    sessionProfileId?: string | undefined;
    /** The model the session pinned (GET /models lists the default backend's): it replaces the profile's backend and model. */
    sessionModel?: string | null;
  } = {},
): ProfileSetup {
  const choice = sources.backends.choose(backendPreference(profile, options.sessionModel ?? null));
  if (!choice.ok) return choice;
  const toolNames = profileTools(profile, sources.tools)
    .map((tool) => tool.name)
    .filter((name) => !(options.subagent && parentOnlyTools.has(name)));
  return {
    ok: true,
    profile,
    setup: {
      backend: choice.backend,
      model: choice.model,
      systemMessages: [
        { role: 'system', content: buildSystemPrompt(sources.persona, profile) },
        ...(options.memory ? [{ role: 'system' as const, content: `## What I remember about the user\n\n${options.memory}` }] : []),
      ],
      toolNames,
      temperature: profile.temperature,
      think: choice.think,
      contextWindow: choice.contextWindow,
      maxIterations: profile.max_iterations,
      approvalPolicies: [profile.approvals, ...(options.governingPolicies ?? [])],
      // A sub-agent's processes are always strictly jailed, whatever its profile gives the parent.
      jailKinds: options.subagent ? {} : profile.jail,
      sessionProfileId: options.sessionProfileId ?? profile.id,
      profileId: profile.id,
      untrustedAllow: profile.untrusted.allow,
    },
  };
}

/** Which backend and model a profile's calls go to; a model the session pinned replaces both. */
function backendPreference(profile: Profile | undefined, sessionModel: string | null): BackendPreference {
  if (sessionModel) return { model: sessionModel };
  return { ...(profile?.backend && { backend: profile.backend }), ...(profile?.model && { model: profile.model }) };
}

/** The context window of the backend a stored session's turns go to (its context meter's maximum). */
export function sessionContextWindow(session: Pick<Session, 'profileId' | 'model'>, sources: Pick<SetupSources, 'backends' | 'profiles'>): number {
  return sources.backends.limits(backendPreference(sources.profiles.get(session.profileId), session.model)).contextWindow;
}

/** The profile a stored session uses now (it may change mid-run through switch_profile). */
export function profileNamed(profileId: string | undefined, profiles: ProfileRegistry): Profile | LlmError {
  const profile = profileId === undefined ? undefined : profiles.get(profileId);
  return profile ?? { code: 'llm_error', message: `There is no profile "${profileId}". Profiles: ${profiles.list().map((known) => known.id).join(', ')}.` };
}

/**
 * The setup for a stored session's next call (`session` as just read; undefined once it was
 * deleted), with what is remembered about the person whose session it is. `runProfileId` is the profile the person
 * chose when the run began: its approval rules keep governing the run after the model switches
 * profile, so a switch never loosens them.
 */
export async function setupForSession(
  session: Pick<Session, 'profileId' | 'model' | 'personId' | 'shared'> | undefined,
  sources: SetupSources,
  runProfileId?: string,
): Promise<ProfileSetup> {
  const profile = profileNamed(session?.profileId, sources.profiles);
  if (!('prompt' in profile)) return { ok: false, error: profile };
  const chosen = runProfileId === undefined || runProfileId === profile.id ? undefined : sources.profiles.get(runProfileId);
  return setupForProfile(profile, sources, {
    memory: session && !session.shared ? await sources.memorySummary(session.personId) : undefined,
    sessionModel: session?.model ?? null,
    ...(chosen && { governingPolicies: [chosen.approvals] }),
  });
}
