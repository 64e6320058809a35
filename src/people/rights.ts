import type { Person, Role } from './person.ts';

/** A profile's say in who may use it and who may decide its approvals (front matter `people`, `approvers`). */
export interface ProfileAccess {
  people: readonly Role[];
  approvers: readonly Role[];
}

/** What a profile without `people` / `approvers` allows: the grown-ups use it, each approving their own calls. */
export const defaultProfileAccess: ProfileAccess = { people: ['owner', 'adult'], approvers: ['owner', 'adult'] };

/** Something that belongs to one person, and that they may share with the household (sessions). */
export interface Owned {
  personId: string;
  shared?: boolean;
}

/** The owner may use every profile; anyone else those whose `people` names their role. */
export function mayUseProfile(person: Person, profile: ProfileAccess): boolean {
  return person.role === 'owner' || profile.people.includes(person.role);
}

/** Their own, and what is shared with the household; nobody else's, the owner's included. */
export function maySee(person: Person, owned: Owned): boolean {
  return owned.personId === person.id || owned.shared === true;
}

/**
 * Who may decide an approval that `asker`'s run waits on, under `profile`: someone whose role the
 * profile names as an approver (the owner always), and then an owner for themselves, other owners,
 * children and guests, and for an adult only where the profile does not let adults decide (an
 * adult's server_admin ask); an adult for themselves and for children and guests. A child or a
 * guest never decides, not even their own. An adult's call that they decide themselves is theirs
 * alone: it is not shown to the owner, as their sessions are not.
 */
export function mayDecide(decider: Person, asker: Person, profile: ProfileAccess): boolean {
  if (decider.role === 'owner') return asker.role !== 'adult' || !profile.approvers.includes('adult');
  if (!profile.approvers.includes(decider.role)) return false;
  if (decider.role !== 'adult') return false;
  return decider.id === asker.id || asker.role === 'child' || asker.role === 'guest';
}

/** Whether the person may manage the household: people, profiles, tools, MCP servers, integrations. */
export function managesHousehold(person: Person): boolean {
  return person.role === 'owner';
}

/** Guests keep no long-term memory, and their sessions expire. */
export function keepsMemory(person: Person): boolean {
  return person.role !== 'guest';
}
