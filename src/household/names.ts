import type { Person } from '../people/person.ts';
import type { Household } from './household.ts';

/** A name as people tell names apart: case, width and composed forms aside ("Émile", "ÉMILE", "Ｅｍｉｌｅ" are one). */
function folded(name: string): string {
  return name.trim().normalize('NFKC').toLowerCase();
}

/**
 * Who in the household already goes by `name` (or one that looks the same), leaving out `except`:
 * a second "émile" beside "Émile" would sign cards and approvals with a name that reads as theirs.
 */
export async function personNamed(household: Pick<Household, 'people'>, name: string, except?: string): Promise<Person | undefined> {
  const wanted = folded(name);
  return (await household.people()).find((person) => person.id !== except && folded(person.name) === wanted);
}
