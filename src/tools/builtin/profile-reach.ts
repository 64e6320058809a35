import type { Person } from '../../people/person.ts';
import { mayUseProfile, type ProfileAccess } from '../../people/rights.ts';
import type { ToolContext } from '../tool.ts';
import type { ToolSessions } from '../tool-sessions.ts';

/** What the tools that act beyond their conversation (spawn_agent, schedule) need to know whose it is. */
export interface PersonReach {
  sessions: () => ToolSessions | undefined;
  profiles: { get(id: string): (ProfileAccess & { id: string }) | undefined };
  /** A person of the household by id; without it (a registry built without one) nobody is checked. */
  person?: (personId: string) => Promise<Person | undefined>;
}

/** The conversation a call is in (a sub-agent's: its parent's), with whose it is. */
export async function conversationOf(reach: Pick<PersonReach, 'sessions'>, context: ToolContext) {
  return reach.sessions()?.find(context.parentSessionId ?? context.sessionId);
}

/**
 * Why the person of the call's conversation may not have work done under `profileId` (a sub-agent,
 * a schedule), or undefined when they may: their role must be one the profile names. A person who
 * left the household may have nothing done for them.
 */
export async function profileRefusal(reach: PersonReach, personId: string, profileId: string): Promise<string | undefined> {
  const profile = reach.profiles.get(profileId);
  if (!profile || !reach.person) return undefined;
  const person = await reach.person(personId);
  if (!person) return 'The person this conversation belonged to has left the household.';
  if (mayUseProfile(person, profile)) return undefined;
  const roles = ['owner', ...profile.people.filter((role) => role !== 'owner')].join(', ');
  return `${person.name} (${person.role}) may not use the profile "${profile.id}": it is for ${roles}.`;
}
