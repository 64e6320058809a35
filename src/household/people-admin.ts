import { refusal, type Refusal } from '../failure.ts';
import type { Person, Role } from '../people/person.ts';
import type { Db } from '../store/database.ts';
import { deleteFact, listFacts } from '../store/memory-repository.ts';
import { deleteNotificationsOf } from '../store/notifications-repository.ts';
import { deletePerson, findPerson, findPersonByName, insertPerson, listPeople, updatePerson } from '../store/people-repository.ts';
import { giveSessionsTo } from '../store/sessions-repository.ts';
import type { AccessEnds } from './ended-access.ts';
import type { Household } from './household.ts';
import { personNamed } from './names.ts';
import { hashPassphrase, verifyPassphrase, type PassphraseCost } from './passphrase.ts';
import type { SignIns } from './sign-ins.ts';

export type PersonResult = { ok: true; person: Person } | ({ ok: false } & Refusal<'person_not_found' | 'name_taken' | 'forbidden' | 'invalid_request'>);

export interface PersonChanges {
  name?: string;
  role?: Role;
  passphrase?: string;
}

/** Adding people and changing them; every write tells the household cache (`household.changed()`). */
export class PeopleAdmin {
  /** The changes that could take the last owner away, one after another (see `exclusively`). */
  private changing: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: { db: Db; household: Household; signIns: SignIns; ends: AccessEnds; passphraseCost?: PassphraseCost }) {}

  /**
   * Runs `work` once every change of roles or removal begun before it has ended, so its check
   * that an owner stays sees what they did: two owners demoted or removed at the same moment
   * would each see the other still there, and leave a household nobody manages (and that every
   * request then fails on).
   */
  private exclusively<T>(work: () => Promise<T>): Promise<T> {
    const done = this.changing.then(work, work);
    this.changing = done.catch(() => undefined);
    return done;
  }

  async add({ name, role, passphrase }: { name: string; role: Role; passphrase: string }): Promise<PersonResult> {
    const { db, household } = this.options;
    const cleanName = name.trim();
    if (await personNamed(household, cleanName)) return nameTaken(cleanName);
    const person = await insertPerson(db, { name: cleanName, role, passphraseHash: await hashPassphrase(passphrase, this.options.passphraseCost) });
    household.changed();
    return { ok: true, person };
  }

  /**
   * The owner's changes to someone: name, role, a new passphrase (which ends their sign-ins). The
   * last owner keeps the role, so the household always has someone to manage it.
   */
  update(id: string, changes: PersonChanges): Promise<PersonResult> {
    return this.exclusively(() => this.updateNow(id, changes));
  }

  private async updateNow(id: string, changes: PersonChanges): Promise<PersonResult> {
    const { db, household, signIns } = this.options;
    const person = await findPerson(db, id);
    if (!person) return notFound(id);
    if (changes.role !== undefined && changes.role !== 'owner' && person.role === 'owner' && (await ownerCount(db)) === 1) {
      return refusal('forbidden', `${person.name} is the only owner: make someone else an owner first.`);
    }
    const name = changes.name?.trim();
    if (name !== undefined && (await personNamed(household, name, id))) return nameTaken(name);
    const updated = await updatePerson(db, id, {
      ...(name !== undefined && { name }),
      ...(changes.role !== undefined && { role: changes.role }),
      ...(changes.passphrase !== undefined && { passphraseHash: await hashPassphrase(changes.passphrase, this.options.passphraseCost) }),
    });
    household.changed();
    if (changes.passphrase !== undefined) await signIns.endAll(id);
    // What was opened under the old role keeps its rights no longer: it opens again as the new one.
    if (updated && updated.role !== person.role) this.options.ends.ended({ personId: id });
    return updated ? { ok: true, person: updated } : notFound(id);
  }

  /**
   * A person's own changes (PATCH /me). Changing a passphrase they already have asks for it
   * (`currentPassphrase`), so a borrowed signed-in page cannot take the account.
   */
  async updateOwn(person: Person, changes: { name?: string; passphrase?: string; currentPassphrase?: string }): Promise<PersonResult> {
    if (changes.passphrase !== undefined && person.hasPassphrase) {
      const stored = await findPersonByName(this.options.db, person.name);
      if (changes.currentPassphrase === undefined || !(await verifyPassphrase(changes.currentPassphrase, stored?.passphraseHash, this.options.passphraseCost))) {
        return refusal('forbidden', 'To choose a new passphrase, give the current one as current_passphrase.');
      }
    }
    return this.update(person.id, { ...(changes.name !== undefined && { name: changes.name }), ...(changes.passphrase !== undefined && { passphrase: changes.passphrase }) });
  }

  /** Whether the person may be removed (not the last owner), and who would then receive their sessions. */
  async removal(id: string): Promise<Removal> {
    const people = await this.options.household.people();
    const person = people.find((candidate) => candidate.id === id);
    if (!person) return notFound(id);
    const heir = people.find((candidate) => candidate.role === 'owner' && candidate.id !== id);
    if (!heir) return refusal('forbidden', `${person.name} is the only owner: make someone else an owner first.`);
    return { ok: true, person, heir };
  }

  /**
   * Removes the person once `settle` has dealt with what is theirs and not this service's (their
   * sessions and schedules, given the heir who receives them), all while no other removal or role
   * change runs; refused, before `settle`, for someone unknown or the last owner.
   */
  removeSettling(id: string, settle: (person: Person, heir: Person) => Promise<void>): Promise<Removal> {
    return this.exclusively(async () => {
      const removal = await this.removal(id);
      if (!removal.ok) return removal;
      await settle(removal.person, removal.heir);
      await this.remove(id);
      return removal;
    });
  }

  /** Gives the person's sessions to `heir`; returns their ids. */
  giveSessions(personId: string, heir: Person): Promise<string[]> {
    return giveSessionsTo(this.options.db, personId, heir.id);
  }

  /**
   * Removes the person with what is theirs alone: memory, notifications, sign-ins and tokens (the
   * last two by the database's cascade). Their sessions and schedules are dealt with first, by
   * the caller that owns them (server/people-routes.ts).
   */
  async remove(personId: string): Promise<boolean> {
    const { db, household } = this.options;
    for (const fact of await listFacts(db, personId)) await deleteFact(db, personId, fact.id);
    await deleteNotificationsOf(db, personId);
    const removed = await deletePerson(db, personId);
    household.changed();
    this.options.ends.ended({ personId });
    return removed;
  }
}

/** What `remove` needs decided first: the person, and the owner who would receive their sessions. */
export type Removal = { ok: true; person: Person; heir: Person } | ({ ok: false } & Refusal<'person_not_found' | 'forbidden'>);

async function ownerCount(db: Db): Promise<number> {
  return (await listPeople(db)).filter((person) => person.role === 'owner').length;
}

function notFound(id: string): { ok: false } & Refusal<'person_not_found'> {
  return refusal('person_not_found', `No person with id ${id}.`);
}

function nameTaken(name: string): { ok: false } & Refusal<'name_taken'> {
  return refusal('name_taken', `Someone in the household is already called "${name}" (names are compared without case).`);
}
