import { randomUUID } from 'node:crypto';
import { refusal, type Refusal } from '../failure.ts';
import type { Person, Role } from '../people/person.ts';
import { managesHousehold } from '../people/rights.ts';
import type { Db } from '../store/database.ts';
import { acceptInvitation, findOpenInvitation, insertInvitation } from '../store/invitations-repository.ts';
import { deletePerson, insertPerson } from '../store/people-repository.ts';
import type { Clock } from '../time/clock.ts';
import type { Household } from './household.ts';
import { personNamed } from './names.ts';
import { hashPassphrase, type PassphraseCost } from './passphrase.ts';
import { digestOf, newSecret } from './secrets.ts';

export const invitationLifetimeMs = 7 * 24 * 60 * 60_000;

export type AcceptedInvitation = { ok: true; person: Person } | ({ ok: false } & Refusal<'invitation_not_valid' | 'name_taken'>);

/** One-time invitations to join the household with a role, valid for 7 days; only a digest of each code is kept. */
export class Invitations {
  constructor(private readonly options: { db: Db; household: Household; clock: Clock; passphraseCost?: PassphraseCost }) {}

  async create(role: Role, invitedBy: string): Promise<{ code: string; expiresAt: string }> {
    const code = newSecret();
    const now = this.options.clock.now();
    const expiresAt = new Date(now.getTime() + invitationLifetimeMs).toISOString();
    await insertInvitation(this.options.db, { id: randomUUID(), codeHash: digestOf(code), role, invitedBy, createdAt: now.toISOString(), expiresAt });
    return { code, expiresAt };
  }

  /**
   * Joins the household as the invitation's role. A used, expired or unknown code is refused
   * alike; two people racing with one code cannot both join (marking it used is the check).
   */
  async accept(code: string, name: string, passphrase: string): Promise<AcceptedInvitation> {
    const { db, household, clock } = this.options;
    const now = clock.now().toISOString();
    const invitation = await findOpenInvitation(db, digestOf(code), now);
    // An invitation speaks for the owner who made it: once they left or are an owner no more, it lets nobody in.
    const inviter = invitation?.invitedBy ? await household.person(invitation.invitedBy) : undefined;
    if (!invitation || !inviter || !managesHousehold(inviter)) return refusal('invitation_not_valid', 'This invitation is unknown, used or expired: ask the owner for a new one.');
    const cleanName = name.trim();
    if (await personNamed(household, cleanName)) return refusal('name_taken', `Someone in the household is already called "${cleanName}" (names are compared without case).`);
    const passphraseHash = await hashPassphrase(passphrase, this.options.passphraseCost);
    const person = await insertPerson(db, { name: cleanName, role: invitation.role as Role, passphraseHash });
    if (!(await acceptInvitation(db, invitation.id, person.id, now))) {
      await deletePerson(db, person.id);
      return refusal('invitation_not_valid', 'This invitation was used a moment ago: ask the owner for a new one.');
    }
    household.changed();
    return { ok: true, person };
  }
}
