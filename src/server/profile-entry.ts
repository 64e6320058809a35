import type { FastifyRequest } from 'fastify';
import { promptCharacters, profileTools } from '../agent/profile-tools.ts';
import type { AgentDependencies } from '../agent/dependencies.ts';
import type { BackendChoice } from '../llm/backend-registry.ts';
import { mayUseProfile } from '../people/rights.ts';
import { describeActiveHours } from '../profiles/heartbeat-settings.ts';
import type { Profile } from '../profiles/profile.ts';

export type ProfileEntrySources = Pick<AgentDependencies, 'tools' | 'backends' | 'persona'>;

/** A profile as GET /agents/profiles lists it (and PATCH /agents/profiles/:id answers). */
export function profileEntry(profile: Profile, request: FastifyRequest, { tools, backends, persona }: ProfileEntrySources) {
  return {
    id: profile.id,
    name: profile.name,
    description: profile.description,
    examples: profile.examples,
    ...modelOf(backends.choose({ ...(profile.backend && { backend: profile.backend }), ...(profile.model && { model: profile.model }) })),
    temperature: profile.temperature,
    planning_enabled: profile.planning_enabled,
    enabled_tools: profileTools(profile, tools).map((tool) => tool.name),
    prompt_characters: promptCharacters(profile, persona, tools),
    heartbeat: profile.heartbeat ? { every: profile.heartbeat.every, active_hours: describeActiveHours(profile.heartbeat) ?? null } : null,
    people: profile.people,
    approvers: profile.approvers,
    // Whether the caller may start a session under it or switch one to it (the page offers only those).
    may_use: mayUseProfile(request.caller.person, profile),
  };
}

function modelOf(choice: BackendChoice): { model: string | null; backend: string | null } {
  return choice.ok ? { model: choice.model, backend: choice.backend.id } : { model: null, backend: null };
}
