import type { Person } from '../people/person.ts';
import type { Db } from '../store/database.ts';
import { findFirstOwner, listPeople } from '../store/people-repository.ts';

/**
 * The people of this Hearth, read once and kept until one of them changes: every request asks
 * who its person is, and that must cost next to nothing (bench: people-check).
 */
export class Household {
  private cache?: { list: Person[]; byId: Map<string, Person>; owner: Person };

  constructor(private readonly db: Db) {}

  async people(): Promise<Person[]> {
    return (await this.load()).list;
  }

  async person(id: string): Promise<Person | undefined> {
    return (await this.load()).byId.get(id);
  }

  /** Who an install's existing sessions belong to, and who AUTH_TOKEN and a lone loopback visitor act as. */
  async firstOwner(): Promise<Person> {
    return (await this.load()).owner;
  }

  async size(): Promise<number> {
    return (await this.load()).list.length;
  }

  /** Call after writing to `people`: the next question reads them again. */
  changed(): void {
    this.cache = undefined;
  }

  private async load(): Promise<NonNullable<Household['cache']>> {
    if (this.cache) return this.cache;
    const list = await listPeople(this.db);
    const owner = await findFirstOwner(this.db);
    // The people migration makes the owner; a household without one is a broken database.
    if (!owner) throw new Error('The household has no owner: the people table lost its first row.');
    this.cache = { list, byId: new Map(list.map((person) => [person.id, person])), owner };
    return this.cache;
  }
}
