import type { AccountPerson, ChannelPeople, LinkResult } from '../../src/household/channel-links.ts';
import type { Person, Role } from '../../src/people/person.ts';

/** Someone of a played household. */
export function playedPerson(name: string, role: Role = 'adult'): Person {
  return { id: `person-${name.toLowerCase()}`, name, role, hasPassphrase: true, createdAt: '2026-11-28T00:00:00.000Z' };
}

/**
 * A channel's view of the household, played by a test: a household of one (its owner) until
 * someone else `joins`; accounts linked by hand or by a code the test hands out.
 */
export class PlayedPeople implements ChannelPeople {
  readonly owner = playedPerson('Owner', 'owner');
  readonly people: Person[] = [this.owner];
  readonly links = new Map<string, Person>();
  /** Codes that link, and to whom; one use each. */
  readonly codes = new Map<string, Person>();

  joins(person: Person): Person {
    this.people.push(person);
    return person;
  }

  linkAccount(account: number, person: Person): void {
    this.links.set(String(account), person);
  }

  async whoIs(account: string): Promise<AccountPerson | undefined> {
    const linked = this.links.get(account);
    if (linked) return { person: linked, linked: true };
    return this.people.length === 1 ? { person: this.owner, linked: false } : undefined;
  }

  async link(account: string, code: string): Promise<LinkResult> {
    const person = this.codes.get(code);
    if (!person) return { ok: false, reason: 'wrong' };
    this.codes.delete(code);
    this.links.set(account, person);
    return { ok: true, person };
  }

  async linkedAccounts() {
    return [...this.links].map(([account, person]) => ({ account, person }));
  }
}
